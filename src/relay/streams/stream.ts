/**
 * @module relay/streams/stream
 * One (channel, market[, depth, group]) stream: its epoch, contiguous `seq`, last state, freshness and a
 * bounded ring of recent updates for resume (protocol.md "Sequencing"). Every message is serialised
 * once here and the same bytes go to every subscriber (the fan-out costs one write per client);
 * what each message holds is relay/streams/frame.ts.
 */

import { idsArePaths } from '../../../packages/protocol/src/channels/registry.ts';
import { streamKey } from '../../../packages/protocol/src/channels/stream-key.ts';
import type { BookDepth, Channel, StreamState } from '../../../packages/protocol/src/protocol/messages.ts';
import { type ChannelDelta, type ChannelState, type StreamCodec, sendWhole } from '../channels/codecs.ts';
import { hasDepths } from '../channels/relay-registry.ts';
import {
  confirmedMessage,
  dataMessage,
  type Frame,
  type StreamPosition,
  statusMessage,
  toFrame,
  unknownMarketError,
  upstreamUnavailableError,
} from './frame.ts';
import type { PacedState } from './paced.ts';
import { type ResumeBounds, ResumeRing } from './resume-ring.ts';
import {
  newEpoch,
  type PublishResult,
  type SequencedFrame,
  type StreamChange,
  type StreamIdentity,
} from './stream-identity.ts';
import { ConflatedFrames, type SubscriberOf, Subscribers } from './subscribers.ts';

/** What a stream needs from a connection subscribed to it (./subscribers.ts). */
export type StreamSubscriber = SubscriberOf<AnyStream>;

/** The last stream number given out (docs/protocol.md "Compact encoding"): one counter per process. */
let lastStreamNumber = 0;

/**
 * A stream of channel `C`, whose states are `State` and whose updates carry `Delta`. The type
 * parameters pair a channel with its data: a `StreamOf<C>` only takes the states of `C`.
 */
export class Stream<State = unknown, Delta = unknown, C extends Channel = Channel> {
  readonly key: string;
  /**
   * The stream's number in compact messages: the same for every subscriber and never reused by
   * another stream in this process, so a client's map from numbers to streams cannot go stale.
   */
  readonly number = ++lastStreamNumber;
  readonly channel: C;
  readonly market: string;
  readonly depth: BookDepth | undefined;
  /** A grouped `book` stream's group step; undefined: the book as upstream's levels are. */
  readonly group: string | undefined;
  /** Whether the wire names this stream's id `path`: read once, so no message asks its channel. */
  readonly idsArePaths: boolean;
  /** Those paced (`interval`, `threshold`) get the change since their group's last message when it sends (./paced.ts). */
  readonly subscribers = new Subscribers<StreamSubscriber>(
    (paced, sent) => this.#sendPaced(paced, sent),
    () => ({ state: this.state, epoch: this.#epoch, seq: this.#seq }),
  );
  /** How many of `subscribers` are clients (not `internal`): each frame is one message to each. */
  get clientCount(): number {
    return this.subscribers.clients;
  }
  /** How many clients each change goes to at once: those not paced at an interval. */
  get rawClientCount(): number {
    return this.subscribers.rawClients;
  }
  /** Told of each paced group's send: the frame and how many clients it went to (metrics). */
  onPacedSend: ((stream: AnyStream, frame: Frame, recipients: number) => void) | undefined;
  readonly #codec: StreamCodec<State, Delta>;
  readonly #conflated: ConflatedFrames<State, Delta>;
  readonly #recent: ResumeRing;
  #epoch = newEpoch();
  #seq = 0;
  /**
   * The state its subscribers hold (undefined before the first): a field, not a getter, since the
   * stream's channel reads it on every poll to make the change it hands down (`StreamChange`).
   * Only the stream writes it (`#hold`).
   */
  readonly state: State | undefined = undefined;
  #ts = '';
  #rts = '';
  #freshness: StreamState = 'live';
  #snapshot: Frame | undefined;
  /** When the relay received the last response that confirmed the state, changed or not. */
  #confirmedRts = '';
  /** The `rts` subscribers were last told about (in a snapshot, an update or a `confirmed`). */
  #announcedRts = '';
  /** Relay clock (ms) of the last upstream response that confirmed this state. */
  lastSuccessAt = 0;
  /** Relay clock (ms) of the last change sent. */
  lastChangeAt = 0;

  /** `resume`: what its resume ring keeps at most (a number: that many updates, the default bytes, no age bound). */
  constructor(identity: StreamIdentity<C>, codec: StreamCodec<State, Delta>, resume: ResumeBounds | number) {
    this.channel = identity.channel;
    this.market = identity.market;
    this.depth = hasDepths(identity.channel) ? (identity.depth ?? null) : undefined;
    this.group = hasDepths(identity.channel) ? identity.group : undefined;
    this.idsArePaths = idsArePaths(identity.channel);
    this.key = streamKey(identity.channel, identity.market, identity.depth, this.group);
    this.#codec = codec;
    this.#conflated = new ConflatedFrames(this, codec);
    const bounds = typeof resume === 'number' ? { updates: resume } : resume;
    this.#recent = new ResumeRing(bounds.updates, bounds.bytes, bounds.ms);
  }

  get epoch(): string {
    return this.#epoch;
  }
  get seq(): number {
    return this.#seq;
  }
  /** Upstream's time of the last state confirmed (protocol.md `ts`); empty before the first. */
  get ts(): string {
    return this.#ts;
  }
  get freshness(): StreamState {
    return this.#freshness;
  }
  get hasState(): boolean {
    return this.state !== undefined;
  }

  /** Takes a new upstream response's state, diffed here with the channel's codec (`publishChange`). */
  publish(next: State, ts: string, rts: string, now: number): PublishResult {
    return this.publishChange(this.changeOf(next), ts, rts, now);
  }

  /** What `next` is to this stream, made with its channel's codec (the checksum only of a change). */
  changeOf(next: State): StreamChange<State, Delta> {
    const delta = this.state === undefined ? undefined : this.#codec.diff(this.state, next);
    return { state: next, delta, checksum: delta === null ? undefined : this.#codec.checksum?.(next) };
  }

  /**
   * Takes a new upstream response's state with the change its channel made of it. The first state
   * goes out as a `snapshot` (seq 1); a changed state as an `update` with seq + 1, or as a
   * `snapshot` with seq + 1 when the codec says it is best sent whole or its update would be
   * larger; an unchanged one sends nothing (protocol.md: "No update is sent for a poll that changed
   * nothing"). The message is made before anything of the stream changes: a state that cannot be
   * sent (it throws) leaves the stream as it was, its `seq` unspent.
   */
  publishChange(change: StreamChange<State, Delta>, ts: string, rts: string, now: number): PublishResult {
    const { state: next, delta, checksum } = change;
    if (this.state === undefined) {
      const at = { seq: 1, ts, rts };
      const frame = this.#dataFrame('snapshot', next, at, checksum);
      return this.#commit(next, at, now, frame, frame, 'snapshot');
    }
    // An unchanged state keeps the times of the response it came from: a later snapshot of this seq
    // must show the same record, `ts` included (protocol.md "Sequencing").
    if (delta === null) {
      this.lastSuccessAt = now;
      this.#confirmedRts = rts;
      return { frame: null, seq: this.#seq, kind: 'update' };
    }
    const at = { seq: this.#seq + 1, ts, rts };
    // Undefined: the change was made before this stream had a state, which it has now: sent whole.
    const update =
      delta === sendWhole || delta === undefined ? undefined : this.#dataFrame('update', delta, at, checksum);
    const snapshot =
      update === undefined || this.#codec.noUpdateLargerThanSnapshot === true
        ? this.#dataFrame('snapshot', next, at, checksum)
        : undefined;
    if (update !== undefined && (snapshot === undefined || update.bytes.length <= snapshot.bytes.length))
      return this.#commit(next, at, now, update, snapshot, 'update');
    return this.#commit(next, at, now, snapshot!, snapshot, 'snapshot');
  }

  /**
   * The stream moves to `next`, numbered `at.seq`, and `frame` goes to its subscribers and its
   * resume ring. A snapshot sent in place of an update starts the ring over: the updates before it
   * no longer matter to anyone who could resume after them.
   */
  #commit(
    next: State,
    at: { seq: number; ts: string; rts: string },
    now: number,
    frame: Frame,
    snapshot: Frame | undefined,
    kind: 'snapshot' | 'update',
  ): PublishResult {
    this.#takeTimes(at.ts, at.rts);
    this.#hold(next);
    this.#seq = at.seq;
    this.#snapshot = snapshot;
    this.lastSuccessAt = now;
    this.lastChangeAt = now;
    this.#announcedRts = at.rts;
    if (at.seq > 1) {
      if (kind === 'snapshot') this.#recent.clear();
      this.#recent.push(at.seq, frame.wire);
    }
    this.#conflated.published(kind === 'update' ? frame : undefined);
    if (this.subscribers.deflating > 0) frame.deflate();
    for (const subscriber of this.subscribers.raw) subscriber.deliver(this, frame, kind);
    this.subscribers.changed();
    return { frame, seq: at.seq, kind };
  }

  /** The bytes this stream's resume ring holds, outside V8's heap (the `resume_buffer_bytes` metric). */
  get resumeBufferBytes(): number {
    return this.#recent.retainedBytes;
  }

  /** The current state as a `snapshot`, serialised once per state. Requires a state. */
  snapshotFrame(): Frame {
    const { state } = this;
    if (state === undefined) throw new Error(`stream ${this.key} has no state yet`);
    const at = { seq: this.#seq, ts: this.#ts, rts: this.#rts };
    this.#snapshot ??= this.#dataFrame('snapshot', state, at, this.#codec.checksum?.(state));
    return this.#snapshot;
  }

  /**
   * The updates after `seq` in `epoch`, if this stream still holds every one of them; undefined
   * when it cannot resume (other epoch, seq ahead of ours, or updates already dropped from the ring).
   */
  updatesSince(epoch: string, seq: number): Frame[] | undefined {
    if (epoch !== this.epoch || this.state === undefined || seq > this.#seq || seq < 1) return undefined;
    if (seq === this.#seq) return [];
    return this.#recent.framesAfter(seq, this.#epoch);
  }

  // Cluster mode (relay/coordination/redis/target-streams.ts): the lease holder numbers the stream for every relay.

  /** The holder's next updates (its epoch, right after `seq`) and the state after the last one. */
  advance(updates: readonly SequencedFrame[], state: State, ts: string, rts: string, now: number): void {
    for (const { seq, frame } of updates) this.#recent.push(seq, frame.wire);
    if (updates.length > 0) this.#conflated.published(updates.at(-1)?.frame);
    this.#seq = updates.at(-1)?.seq ?? this.#seq;
    this.#confirm(state, ts, rts, now);
    this.lastChangeAt = now;
    if (updates.length > 0) this.#announcedRts = rts;
    for (const { frame } of updates)
      for (const subscriber of this.subscribers.raw) subscriber.deliver(this, frame, 'update');
    if (updates.length > 0) this.subscribers.changed();
  }

  /** Starts over at the holder's position (new epoch, or a gap): subscribers get a snapshot. */
  reset(
    position: StreamPosition,
    state: State,
    ts: string,
    rts: string,
    now: number,
    recent: readonly SequencedFrame[] = [],
  ): void {
    this.#epoch = position.epoch;
    this.#seq = position.seq;
    this.#recent.clear();
    this.#conflated.published(undefined);
    for (const { seq, frame } of recent) this.#recent.push(seq, frame.wire);
    this.#confirm(state, ts, rts, now);
    this.lastChangeAt = now;
    this.#announcedRts = rts;
    if (this.subscribers.size === 0) return;
    const frame = this.snapshotFrame();
    for (const subscriber of this.subscribers.raw) subscriber.deliver(this, frame, 'snapshot');
    this.subscribers.changed();
  }

  /** A paced group's turn: one frame for every member, the change since `sent` (./subscribers.ts ConflatedFrames). */
  #sendPaced(members: ReadonlySet<StreamSubscriber>, sent: PacedState): void {
    const { state } = this;
    if (state === undefined) return;
    const current = { state, epoch: this.#epoch, seq: this.#seq, ts: this.#ts, rts: this.#rts };
    const frame = this.#conflated.changeSince(sent, current, () => this.snapshotFrame());
    const kind = frame.basis === undefined ? 'snapshot' : 'update';
    let clients = 0;
    for (const subscriber of members) {
      subscriber.deliver(this, frame, kind);
      if (subscriber.internal !== true) clients += 1;
    }
    this.onPacedSend?.(this as AnyStream, frame, clients);
  }

  /**
   * A poll that changed nothing confirmed the state: what `publish` of an unchanged state does,
   * without comparing states (a response known to be the one the state came from). The state keeps
   * its `ts` and `rts`: they are the record's; `rts` of this response is only what `confirmed` says.
   */
  confirm(rts: string, now: number): void {
    if (this.state === undefined) return;
    this.#confirmedRts = rts;
    this.lastSuccessAt = now;
  }

  /** Numbered by this relay alone from now on (Redis away): a new epoch, starting with a snapshot. */
  fork(): void {
    this.#epoch = newEpoch();
    this.#seq = 0;
    this.#hold(undefined);
    this.#snapshot = undefined;
    this.#recent.clear();
    this.#conflated.published(undefined);
  }

  #hold(state: State | undefined): void {
    (this as { state: State | undefined }).state = state;
  }

  #confirm(state: State, ts: string, rts: string, now: number): void {
    this.#hold(state);
    this.#takeTimes(ts, rts);
    this.lastSuccessAt = now;
  }

  /** The times of a new state; the cached snapshot showed the old one. */
  #takeTimes(ts: string, rts: string): void {
    this.#ts = ts;
    this.#rts = rts;
    this.#confirmedRts = rts;
    this.#snapshot = undefined;
  }

  /**
   * Tells the subscribers that upstream confirmed the state they hold since they last heard of it
   * (protocol.md "`confirmed`"): one frame for all of them, and nothing when no response arrived
   * since the last snapshot, update or confirmation (so the time stops advancing when upstream
   * fails). Returns whether a frame went out.
   */
  announceConfirmation(): boolean {
    if (this.state === undefined || this.#freshness !== 'live' || this.subscribers.size === 0) return false;
    if (this.#confirmedRts === this.#announcedRts) return false;
    this.#announcedRts = this.#confirmedRts;
    const frame = toFrame(
      confirmedMessage(this, this.#epoch, this.#seq, this.#confirmedRts),
      this.idsArePaths,
    );
    for (const subscriber of this.subscribers) subscriber.notify(this, frame);
    return true;
  }

  /** Moves to `live` / `stale`, telling subscribers; returns false when nothing changed. */
  setFreshness(state: 'live' | 'stale', reason?: string): boolean {
    if (this.#freshness === state || this.#freshness === 'closed') return false;
    this.#freshness = state;
    const frame = this.statusFrame(reason);
    // A subscription that never got its first state could not be served at all: say so as an error.
    const error =
      state === 'stale' && this.state === undefined
        ? toFrame(upstreamUnavailableError(this, reason), this.idsArePaths)
        : undefined;
    for (const subscriber of this.subscribers) {
      subscriber.notify(this, frame);
      if (error !== undefined) subscriber.notify(this, error);
    }
    return true;
  }

  statusFrame(reason?: string): Frame {
    return toFrame(statusMessage(this, this.#freshness, reason), this.idsArePaths);
  }

  /**
   * The market is gone upstream (404). A stream that never had a state was a subscription to a
   * market that does not exist: its subscribers get `unknown_market`; others get `status closed`.
   */
  close(reason: string): void {
    if (this.#freshness === 'closed') return;
    const hadState = this.state !== undefined;
    this.#freshness = 'closed';
    const frame = hadState
      ? this.statusFrame(reason)
      : toFrame(unknownMarketError(this.channel, this.market), this.idsArePaths);
    for (const subscriber of [...this.subscribers]) {
      subscriber.notify(this, frame);
      subscriber.ended(this);
    }
    this.subscribers.clear();
    this.#recent.clear();
  }

  /** The frame of a `snapshot` or `update` at `at` of this epoch, `checksum` that of the state after it. */
  #dataFrame(
    type: 'snapshot' | 'update',
    data: State | Delta,
    at: { seq: number; ts: string; rts: string },
    checksum: number | undefined,
  ): Frame {
    return toFrame(dataMessage(this, type, data, { epoch: this.#epoch, ...at }, checksum), this.idsArePaths);
  }
}

/** A stream of channel `C`, its states and updates of that channel's types. */
export type StreamOf<C extends Channel> = Stream<ChannelState<C>, ChannelDelta<C>, C>;

/** A stream of any channel, its state type still tied to its channel (narrow on `channel`). */
export type ChannelStream = { [C in Channel]: StreamOf<C> }[Channel];

/** A stream of any channel seen from a subscriber's side. */
export type AnyStream = Stream<unknown, unknown>;
