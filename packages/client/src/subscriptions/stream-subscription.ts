/**
 * @module client/subscriptions/stream-subscription
 * One subscribed stream as the application sees it: the last verified state, built from snapshot +
 * updates with the shared pure core, with `seq` continuity, epoch and checksum checked on every
 * message (protocol.md "Sequencing", "checksum"). On a gap, a checksum mismatch or an update from
 * another epoch it asks its host for a fresh snapshot and drops updates until it arrives. What is
 * particular to each channel (its state, how an update applies) is in ./channel-subscriptions.ts
 * (and, for a channel with a folder of its own, in channels/).
 */

import { hasDepths } from '../../../protocol/src/channels/registry.ts';
import type { HistoryCoverage } from '../../../protocol/src/protocol/history.ts';
import type {
  BookDepth,
  Channel,
  ConfirmedMessage,
  ResumePoint,
  StatusMessage,
  StreamMessage,
  StreamState,
} from '../../../protocol/src/protocol/messages.ts';
import type { StreamRef } from '../connection/frames.ts';
import type { RelayClientError } from '../events/client-error.ts';
import { Emitter } from '../events/emitter.ts';
import type { ClientLogger } from '../events/logger.ts';

/**
 * - `pending`: no snapshot yet.
 * - `live`: the state is current.
 * - `stale`: the state is the last known one: the connection is down, or the relay reports that
 *   upstream polls fail (protocol.md "`status`").
 * - `resyncing`: continuity was lost; the state is the last verified one until a snapshot arrives.
 * - `closed`: unsubscribed, the client closed, or the market is gone upstream.
 */
export type SubscriptionStatus = 'pending' | 'live' | 'stale' | 'resyncing' | 'closed';

/** Why a stream was resynced: a `seq` gap, a checksum mismatch, a new epoch, or an unreadable message. */
export type ResyncReason = 'gap' | 'checksum' | 'epoch' | 'malformed';

export interface StreamEvents<State, Snapshot, Update> {
  update: { message: Update; state: State };
  snapshot: { message: Snapshot; state: State };
  resync: { reason: ResyncReason; detail: string };
  status: { status: SubscriptionStatus; reason?: string };
  /** Upstream confirmed the state held, unchanged, at `confirmedAt` (protocol.md "`confirmed`"). */
  confirmed: { confirmedAt: string };
  error: RelayClientError;
}

/** What a stream needs from the client that owns it; streams name themselves by address. */
export interface StreamHost {
  /** Ask the relay for a fresh snapshot of this stream (a repeated `subscribe`). */
  requestSnapshot(stream: StreamRef): void;
  /** The application unsubscribed: stop the stream at the relay and forget it. */
  release(stream: StreamRef): void;
  /** Where listener exceptions go. */
  reportListenerError(error: unknown): void;
  /** Where a stream logs going stale and live again; absent: nowhere. */
  readonly logger?: ClientLogger;
  /**
   * Moves a book stream to `depth` at the relay; `moved` is called as the relay's answer arrives,
   * before the new depth's snapshot. Absent where the host cannot (the request is refused).
   */
  changeDepth?(stream: StreamRef, depth: BookDepth, moved: () => void): Promise<void>;
  /**
   * Sets a stream's `interval` and `threshold` at the relay (an `update`; null clears one, absent
   * leaves it); the stream takes them as the relay's answer arrives. Absent where the host cannot.
   */
  changeOptions?(stream: StreamRef, options: StreamOptions): Promise<void>;
}

/** A stream's options as an `update` changes them: null clears one, absent leaves it as it is. */
export interface StreamOptions {
  interval?: number | null;
  threshold?: string | null;
}

interface StreamMessageOf<Data> {
  type: 'snapshot' | 'update';
  epoch: string;
  seq: number;
  /** A paced subscription's conflated update: the `seq` it applies to. */
  prev_seq?: number;
  rts: string;
  data: Data;
}

/**
 * `Events` lets a channel add its own events (`trade`, `closed`) to the ones every stream has.
 */
export abstract class StreamSubscription<
  State,
  Snapshot extends StreamMessageOf<unknown>,
  Update extends StreamMessageOf<unknown>,
  Events extends StreamEvents<State, Snapshot, Update> = StreamEvents<State, Snapshot, Update>,
> extends Emitter<Events> {
  abstract readonly channel: Channel;
  /** `book`: 1, 5, 10, 25, 50 or null (full book); other channels: undefined. */
  abstract readonly depth: BookDepth | undefined;
  /** `book`: the group step levels are summed into (docs/protocol.md "Grouped books"); else undefined. */
  get group(): string | undefined {
    return undefined;
  }
  readonly market: string;
  /** The last verified state; `undefined` until the first snapshot. Never mutated: each change is a new object. */
  state: State | undefined;
  epoch: string | undefined;
  seq: number | undefined;
  /**
   * When upstream last confirmed `state` (the relay's receive time, ISO 8601): the `rts` of the
   * last snapshot or update applied, or a later `confirmed` message for that state. It stops
   * advancing while upstream fails; undefined until the first snapshot.
   */
  confirmedAt: string | undefined;
  /**
   * The pace asked for (ms; docs/protocol.md "Per-subscription options"): at most one message per
   * interval, each a snapshot of the latest state. Undefined: every change. Set by the client.
   */
  interval: number | undefined;
  /**
   * `price`: the move of best bid, best ask or midpoint each message waits for (a decimal string;
   * docs/protocol.md "Per-subscription options"), each a snapshot. Undefined: every change.
   */
  threshold: string | undefined;
  /**
   * The history asked for the first snapshot (docs/protocol.md "History and replay"), until a
   * snapshot arrives; then a reconnect resumes instead. Set by the client.
   */
  since: string | undefined;
  /**
   * The relay's answer to the last `since` asked: where the answer starts (`from`) and whether it
   * reaches back as far as asked (`complete`: false where the record, or upstream's listing, starts
   * later). Set as the `subscribed` reply arrives, before the snapshot; undefined without `since`.
   */
  history: HistoryCoverage | undefined = undefined;
  readonly #host: StreamHost;
  #resyncing = false;
  #connectionDown = false;
  #relayState: StreamState = 'live';
  #closed = false;
  #status: SubscriptionStatus = 'pending';
  /** A warning said the stream went stale: an info line says when it is live again. */
  #reportedStale = false;
  #version = 0;
  readonly #waiters = new Set<() => void>();

  constructor(host: StreamHost, market: string) {
    super();
    this.#host = host;
    this.market = market;
  }

  get status(): SubscriptionStatus {
    return this.#status;
  }

  /** Stops the stream; the subscription ends with status `closed`. */
  unsubscribe(): void {
    if (this.#closed) return;
    this.#host.release(this.#address());
    this.end('unsubscribed');
  }

  /** Latest-state iteration: a slow consumer skips intermediate states, never sees an unverified one. */
  async *[Symbol.asyncIterator](): AsyncGenerator<State, void, undefined> {
    let seen = 0;
    for (;;) {
      if (this.#version > seen && this.state !== undefined) {
        seen = this.#version;
        yield this.state;
        continue;
      }
      if (this.#closed) return;
      await new Promise<void>((resolve) => this.#waiters.add(resolve));
    }
  }

  protected override onListenerError(error: unknown): void {
    this.#host.reportListenerError(error);
  }

  // --- Called by the client ----------------------------------------------------------------------

  /**
   * The relay moved the stream to other options (a book's depth): what it held stands until the
   * new stream's snapshot, which replaces it; updates until then cannot be placed.
   */
  protected awaitSnapshot(): void {
    if (this.#closed) return;
    this.#resyncing = true;
    this.#refreshStatus('options changed');
  }

  /** Where to resume after a reconnect: only a state the stream still trusts. */
  get resumePoint(): ResumePoint | undefined {
    if (this.#resyncing || this.epoch === undefined || this.seq === undefined) return undefined;
    return { epoch: this.epoch, seq: this.seq };
  }

  get isClosed(): boolean {
    return this.#closed;
  }

  /**
   * A snapshot or update the client routed here by its (channel, market[, depth]) address, so its
   * channel is this stream's and its data that channel's (checked by ../connection/frames.ts).
   */
  receive(message: StreamMessage): void {
    if (this.#closed || message.channel !== this.channel) return;
    const own = message as unknown as Snapshot | Update;
    if (own.type === 'snapshot') this.#onSnapshot(own as Snapshot);
    else this.#onUpdate(own as Update);
  }

  receiveStatus(message: StatusMessage): void {
    if (this.#closed) return;
    if (message.state === 'closed') {
      this.end(message.reason ?? 'market closed');
      return;
    }
    this.#relayState = message.state;
    this.#refreshStatus(message.reason);
  }

  /** Counts only for the state this stream holds: a confirmation of a later `seq` says nothing of it. */
  receiveConfirmed(message: ConfirmedMessage): void {
    if (this.#closed || this.#resyncing || message.epoch !== this.epoch || message.seq !== this.seq) return;
    if (this.confirmedAt !== undefined && message.confirmed <= this.confirmedAt) return;
    this.confirmedAt = message.confirmed;
    this.#emit('confirmed', { confirmedAt: message.confirmed });
  }

  receiveError(error: RelayClientError): void {
    if (this.#closed) return;
    this.#emit('error', error);
    // protocol.md "Error codes": the market does not exist upstream; the relay dropped the stream.
    if (error.code === 'unknown_market') this.end(error.message);
  }

  /** The relay's answer to a resume: `true` means the missed updates follow (or none were missed). */
  resumed(recovered: boolean): void {
    if (recovered && !this.#closed) {
      this.#connectionDown = false;
      this.#refreshStatus();
    }
  }

  /** A message for this stream could not be read: its state may have missed something. */
  malformed(detail: string): void {
    if (!this.#closed && this.state !== undefined) this.#resync('malformed', detail);
  }

  connectionLost(): void {
    if (this.#closed) return;
    this.#connectionDown = true;
    this.#relayState = 'live';
    this.#refreshStatus('connection lost');
  }

  end(reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#refreshStatus(reason);
    for (const wake of this.#waiters) wake();
    this.#waiters.clear();
  }

  // --- Channel specifics ---------------------------------------------------------------------------

  /** The state a snapshot gives (its data, or a shape the channel keeps it in). */
  protected abstract stateOf(snapshot: Snapshot): State;
  protected abstract apply(state: State, update: Update): State;
  /** Whether a state matches the checksum its message carries (channels without one: always). */
  protected verify(_state: State, _message: Snapshot | Update): boolean {
    return true;
  }
  /** After a message was accepted and announced: where a channel emits its own events. */
  protected accepted(_message: Snapshot | Update, _state: State): void {}

  /**
   * Emits one of the events every stream has. `Events` extends them, so their payload types hold;
   * TypeScript cannot see that through the type parameter, hence the cast.
   */
  #emit<K extends keyof StreamEvents<State, Snapshot, Update>>(
    event: K,
    payload: StreamEvents<State, Snapshot, Update>[K],
  ): void {
    (this as unknown as StreamSubscription<State, Snapshot, Update>).emit(event, payload);
  }

  // --- State machine -------------------------------------------------------------------------------

  #onSnapshot(message: Snapshot): void {
    this.since = undefined;
    const state = this.stateOf(message);
    if (!this.verify(state, message)) {
      this.#resync('checksum', `snapshot ${message.epoch}/${message.seq} does not match its checksum`);
      return;
    }
    // protocol.md "Sequencing": a new epoch means the numbering restarted (relay restart, lost state).
    if (!this.#resyncing && this.epoch !== undefined && this.epoch !== message.epoch) {
      this.#emit('resync', { reason: 'epoch', detail: `epoch ${this.epoch} replaced by ${message.epoch}` });
    }
    this.#accept(state, message);
    this.#emit('snapshot', { message, state });
    this.accepted(message, state);
  }

  #onUpdate(message: Update): void {
    // While waiting for a snapshot, updates cannot be placed: drop them (docs/protocol.md step 2).
    if (this.state === undefined || this.#resyncing || this.seq === undefined) return;
    if (message.epoch !== this.epoch) {
      this.#resync('epoch', `update from epoch ${message.epoch} on a stream in epoch ${this.epoch}`);
      return;
    }
    if (message.seq <= this.seq) return; // already applied (an old message)
    // A paced subscription's conflated update names the state it applies to (docs/protocol.md "interval").
    const applies = message.prev_seq ?? message.seq - 1;
    if (applies !== this.seq) {
      const after = message.prev_seq === undefined ? '' : ` (from seq ${message.prev_seq})`;
      this.#resync('gap', `update seq ${message.seq}${after} after seq ${this.seq}`);
      return;
    }
    const next = this.apply(this.state, message);
    if (!this.verify(next, message)) {
      this.#resync('checksum', `state after seq ${message.seq} does not match its checksum`);
      return;
    }
    this.#accept(next, message);
    this.#emit('update', { message, state: next });
    this.accepted(message, next);
  }

  #accept(state: State, message: StreamMessageOf<unknown>): void {
    this.state = state;
    this.epoch = message.epoch;
    this.seq = message.seq;
    this.confirmedAt = message.rts;
    this.#resyncing = false;
    this.#connectionDown = false;
    this.#version += 1;
    this.#refreshStatus();
    for (const wake of this.#waiters) wake();
    this.#waiters.clear();
  }

  #resync(reason: ResyncReason, detail: string): void {
    this.#resyncing = true;
    this.#emit('resync', { reason, detail });
    this.#refreshStatus(detail);
    this.#host.requestSnapshot(this.#address());
  }

  #address(): StreamRef {
    return { channel: this.channel, market: this.market, depth: this.depth, group: this.group };
  }

  #refreshStatus(reason?: string): void {
    const status = this.#computeStatus();
    if (status === this.#status) return;
    this.#status = status;
    this.#logFreshness(status, reason);
    this.#emit('status', reason === undefined ? { status } : { status, reason });
  }

  /** `stale` is a warning (the state is the last known, not current), `live` after it an info line. */
  #logFreshness(status: SubscriptionStatus, reason: string | undefined): void {
    const logger = this.#host.logger;
    if (logger === undefined || (status !== 'stale' && !(status === 'live' && this.#reportedStale))) return;
    const depth = hasDepths(this.channel) ? ` depth ${this.depth ?? 'full'}` : '';
    const stream = `${this.channel} ${this.market}${depth}`;
    this.#reportedStale = status === 'stale';
    try {
      if (status === 'stale')
        logger.warn(`${stream} is stale: ${reason ?? 'the relay reports upstream failing'}`);
      else logger.info(`${stream} is live again`);
    } catch (error) {
      // The application's logger failing must not stop the stream: it is reported as a listener's.
      this.#host.reportListenerError(error);
    }
  }

  #computeStatus(): SubscriptionStatus {
    if (this.#closed) return 'closed';
    if (this.#resyncing) return 'resyncing';
    if (this.state === undefined) return 'pending';
    if (this.#connectionDown || this.#relayState === 'stale') return 'stale';
    return 'live';
  }
}
