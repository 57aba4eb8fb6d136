/**
 * @module client/history/replay
 * One `replay` (docs/protocol.md "History and replay") as the application reads it: an async
 * iterator of the recorded messages, each applied to its market's stream as it is read, so that
 * the state after each message can be read there (a book at every step, its checksum verified as
 * the live path verifies it); a hole in the record comes as a `gap` item, a lost continuity (a
 * checksum that does not match, a `seq` gap) as a `resync` item; the iteration ends at `replayed`.
 * Leaving the loop early sends `replay_stop`. Messages are applied when read, not when they
 * arrive: a reader slower than the relay still sees each state as it stood after its message.
 */
import type { ReplayedMessage, ReplayGapMessage } from '../../../protocol/src/protocol/history.ts';
import type {
  BookDepth,
  Channel,
  ErrorMessage,
  RequestId,
  StreamMessage,
} from '../../../protocol/src/protocol/messages.ts';
import { RelayClientError } from '../events/client-error.ts';
import type { ResyncReason, StreamSubscription } from '../subscriptions/stream-subscription.ts';
import { detachedHost, type ReplayedStreamOf, replayedStream } from './replayed-streams.ts';

/** What a replay yields, in the order the relay sent it. */
export type ReplayItem<S> =
  | {
      type: 'message';
      market: string;
      /** The recorded message as it was sent (with `replay`: the replay's id). */
      message: MessageOf<S>;
      /** The market's state after the message, verified; never changed afterwards. */
      state: NonNullable<StateOf<S>>;
      /** The market's replayed stream: `epoch`, `seq`, `confirmedAt` as of this message. */
      stream: S;
    }
  /** Nothing was recorded of `gap.market` between `gap.from` and `gap.to` (`gap.reason` says why). */
  | { type: 'gap'; gap: ReplayGapMessage }
  /**
   * The market's record lost continuity here (a checksum that does not match, a `seq` gap, a new
   * epoch): its state stays the last verified one, and its updates are skipped until the record's
   * next snapshot.
   */
  | { type: 'resync'; market: string; reason: ResyncReason; detail: string };

type StateOf<S> = S extends { state: infer State } ? State : never;
/** The snapshot and update messages of a stream kind (a book's carry its checksum). */
type MessageOf<S> =
  S extends StreamSubscription<infer _State, infer Snapshot, infer Update, infer _Events>
    ? Snapshot | Update
    : StreamMessage;

/** What the relay sends a replay; the client routes each message carrying its id here. */
export type ReplayInput = StreamMessage | ReplayGapMessage | ReplayedMessage | ErrorMessage;

export interface ReplayWiring<C extends Channel> {
  id: RequestId;
  channel: C;
  depth: BookDepth;
  group: string | undefined;
  /** Sends `replay_stop` (when the connection is open; a closed one ended the replay already). */
  stop(): void;
  /** Forgets the replay: its late messages are dropped. */
  forget(): void;
  reportListenerError(error: unknown): void;
}

export class Replay<C extends Channel = Channel> implements AsyncIterable<ReplayItem<ReplayedStreamOf<C>>> {
  readonly id: RequestId;
  /** The relay's last word once the iteration has ended: how many messages, whether stopped. */
  result: ReplayedMessage | undefined = undefined;
  readonly #wiring: ReplayWiring<C>;
  readonly #streams = new Map<string, ReplayedStreamOf<C>>();
  /** Arrived, not read yet, from `#head` on: a replay at "max" may queue many, so none is shifted out one by one. */
  #queue: (ReplayInput | undefined)[] = [];
  #head = 0;
  #failure: RelayClientError | undefined;
  #wake: (() => void) | undefined;
  #iterated = false;

  constructor(wiring: ReplayWiring<C>) {
    this.id = wiring.id;
    this.#wiring = wiring;
  }

  /** A message of this replay, kept until the reader asks for it. */
  receive(message: ReplayInput): void {
    this.#queue.push(message);
    this.#wakeReader();
  }

  /** The replay cannot go on (the connection closed): the reader's loop throws `error`. */
  fail(error: RelayClientError): void {
    this.#failure ??= error;
    this.#wakeReader();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ReplayItem<ReplayedStreamOf<C>>, void, undefined> {
    if (this.#iterated) throw new TypeError(`replay ${this.id} is read once`);
    this.#iterated = true;
    let ended = false;
    try {
      for (;;) {
        const next = this.#take();
        if (next === undefined) {
          if (this.#failure !== undefined) throw this.#failure;
          await new Promise<void>((resolve) => {
            this.#wake = resolve;
          });
          continue;
        }
        if (next.type === 'replayed') {
          this.result = next;
          ended = true;
          return;
        }
        if (next.type === 'error') {
          ended = true;
          throw new RelayClientError(next.code, next.message, { requestId: this.id });
        }
        if (next.type === 'replay_gap') yield { type: 'gap', gap: next };
        else {
          const item = this.#apply(next);
          if (item !== undefined) yield item;
        }
      }
    } finally {
      // Left early (break, return, a throw in the loop's body): the relay is told to stop.
      if (!ended && this.#failure === undefined) this.#wiring.stop();
      this.#wiring.forget();
    }
  }

  #take(): ReplayInput | undefined {
    if (this.#head === this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
      return undefined;
    }
    const next = this.#queue[this.#head];
    this.#queue[this.#head++] = undefined;
    // Drop the read part once it is most of the array.
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    return next;
  }

  #wakeReader(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /** Applies a message to its market's stream; undefined when the stream could not place it. */
  #apply(message: StreamMessage): ReplayItem<ReplayedStreamOf<C>> | undefined {
    const stream = this.#stream(message.market);
    let outcome: ReplayItem<ReplayedStreamOf<C>> | undefined;
    const onResync = ({ reason, detail }: { reason: ResyncReason; detail: string }) => {
      outcome = { type: 'resync', market: message.market, reason, detail };
    };
    const onApplied = () => {
      const state = stream.state as NonNullable<StateOf<ReplayedStreamOf<C>>>;
      // The message was routed to this stream by its market and is of its channel.
      const own = message as MessageOf<ReplayedStreamOf<C>>;
      outcome = { type: 'message', market: message.market, message: own, state, stream };
    };
    // Each stream kind's events share these payloads (StreamEvents); its own type is a union.
    const events = stream as unknown as {
      on(event: string, listener: (payload: never) => void): void;
      off(event: string, listener: (payload: never) => void): void;
    };
    events.on('resync', onResync);
    events.on('snapshot', onApplied);
    events.on('update', onApplied);
    try {
      stream.receive(message);
    } finally {
      events.off('resync', onResync);
      events.off('snapshot', onApplied);
      events.off('update', onApplied);
    }
    return outcome;
  }

  #stream(market: string): ReplayedStreamOf<C> {
    let stream = this.#streams.get(market);
    if (stream === undefined) {
      const host = detachedHost((error) => this.#wiring.reportListenerError(error));
      const { channel, depth, group } = this.#wiring;
      stream = replayedStream(channel, market, host, depth, group);
      this.#streams.set(market, stream);
    }
    return stream;
  }
}
