/**
 * @module relay/session/session-since
 * A session's subscriptions with `since` (docs/protocol.md "History and replay"): their seams
 * (./since-seam.ts), which hold each stream's live messages until its history has gone out; the
 * `subscribed` reply, which waits for where the history starts (its `history`), the requests behind
 * it waiting too; and the `since` each held stream was asked with, which `list` shows.
 */
import type { SinceSpec } from '../../../packages/protocol/src/channels/history.ts';
import type {
  RequestId,
  ServerMessage,
  SubscribedMessage,
  SubscribeRequest,
} from '../../../packages/protocol/src/protocol/messages.ts';
import type { Frame } from '../streams/frame.ts';
import type { AnyStream } from '../streams/stream.ts';
import type { RequestOrder } from './request-order.ts';
import type { SinceReads } from './since-reads.ts';
import { SinceSeams } from './since-seam.ts';
import { checkSelection, type JoinedStream, type SelectionCheck } from './subscription.ts';

/** What the session lends its `since` subscriptions. */
export interface SinceHost {
  readonly order: RequestOrder;
  /** True once nothing more may be written. */
  finished(): boolean;
  /** Writes a stream message past the seams. */
  write(stream: AnyStream, frame: Frame): void;
  send(message: ServerMessage): void;
  leave(stream: AnyStream): void;
  /** Sends the usual first messages of streams joined without `since`. */
  first(streams: readonly JoinedStream[]): void;
}

/** A subscribe's joined streams, with what it asked. */
export interface SinceSubscribe {
  id: RequestId | undefined;
  /** As the client wrote it, for `list`. */
  text: string | undefined;
  since: SinceSpec | undefined;
  joined: readonly JoinedStream[];
}

export class SessionSince {
  readonly #host: SinceHost;
  readonly #seams: SinceSeams;
  readonly #reads: SinceReads | undefined;
  /** The `since` each held stream was subscribed with, by stream key. */
  readonly #asked = new Map<string, string>();
  /** The streams whose history is under way, by key: their live messages are held. */
  readonly underWay: ReadonlyMap<string, unknown>;

  constructor(reads: SinceReads | undefined, host: SinceHost) {
    this.#host = host;
    this.#reads = reads;
    this.#seams = new SinceSeams({
      ...(reads === undefined
        ? {}
        : {
            read: (channel, market, since, at) => reads.read(channel, market, since, at),
            record: reads.record,
          }),
      deliver: (stream, frame) => host.write(stream, frame),
      fail: (stream, error) => {
        host.send(error);
        host.leave(stream);
      },
    });
    this.underWay = this.#seams.underWay;
  }

  /** A subscribe's selection checked (./subscription.ts), `since` within the record's retention. */
  check(request: SubscribeRequest, maxStreams: number, held: ReadonlyMap<string, unknown>): SelectionCheck {
    return checkSelection(request, maxStreams, held, this.#reads?.record?.retention.maxAgeMs);
  }

  /** True when `frame` is held for a history still going out. */
  hold(stream: AnyStream, frame: Frame): boolean {
    return this.#seams.hold(stream, frame);
  }

  /** `list`'s `since` of a held stream. */
  askedOf(stream: AnyStream): string | undefined {
    return this.#asked.get(stream.key);
  }

  /**
   * Answers a subscribe whose streams are joined: `subscribed` (with `history` when it asked
   * `since`) and the messages that follow it (`after`), then the streams' first messages, the
   * history of each `since` stream.
   */
  answer(request: SinceSubscribe, subscribed: SubscribedMessage, after: readonly ServerMessage[]): void {
    const host = this.#host;
    for (const { stream } of request.joined)
      if (request.text === undefined) this.#asked.delete(stream.key);
      else this.#asked.set(stream.key, request.text);
    const begun = this.#seams.begin(request.since, request.id, request.joined);
    if (begun === undefined) {
      host.send(subscribed);
      for (const message of after) host.send(message);
      host.first(request.joined);
      return;
    }
    host.order.hold(
      withinWait(begun.ready).then((history) => {
        if (host.finished()) return;
        host.send(history === undefined ? subscribed : { ...subscribed, history });
        for (const message of after) host.send(message);
        host.first(begun.left);
        begun.release();
      }),
    );
  }

  /** The stream was left or ended. */
  drop(key: string): void {
    this.#seams.drop(key);
    this.#asked.delete(key);
  }

  clear(): void {
    this.#seams.clear();
    this.#asked.clear();
  }
}

/**
 * How long `subscribed` (and the requests behind it) waits for where the history starts: a stream
 * that never gets a state (upstream down) must not hold the connection's answers for ever. Past it,
 * `subscribed` goes without `history`, and the history follows once read.
 */
const SINCE_REPLY_WAIT_MS = 10_000;

function withinWait<T>(ready: Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), SINCE_REPLY_WAIT_MS);
    timer.unref();
  });
  return Promise.race([ready, waited]).finally(() => clearTimeout(timer));
}
