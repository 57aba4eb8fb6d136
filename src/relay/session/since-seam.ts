/**
 * @module relay/session/since-seam
 * A subscription with `since` of a channel that serves history (docs/protocol.md "History since a
 * time"; the channel's `history`, channels/relay-definition.ts): the session joins the live stream
 * first and holds that subscriber's live messages while the history is read
 * (relay/session/since-reads.ts), then sends one snapshot, which the channel makes of the history,
 * the stream's data at the join and the held messages, at the position of the last held message;
 * live updates go on from there. The read starts only once the stream has a state and after the
 * join, so what it reads reaches past the join point and the held messages cover everything after it.
 */
import type { SinceSpec } from '../../../packages/protocol/src/channels/history.ts';
import type { Channel } from '../../../packages/protocol/src/protocol/channels.ts';
import type { RequestId, ServerMessage } from '../../../packages/protocol/src/protocol/messages.ts';
import { codecs, type StreamCodec } from '../channels/codecs.ts';
import type { HeldMessage, HistoryRead, ServesHistory } from '../channels/relay-definition.ts';
import { type ChannelUpstream, historyOf } from '../channels/relay-registry.ts';
import { type Frame, toFrame } from '../streams/frame.ts';
import type { AnyStream } from '../streams/stream.ts';
import { dataMessage, type MessagePosition } from '../streams/stream-messages.ts';
import type { JoinedStream } from './subscription.ts';

/** What the seams need of their session. */
export interface SeamSession {
  /**
   * The history read of `channel`'s `market` since `since`, for a subscriber joined at `joinedAt`;
   * undefined: not offered.
   */
  read?(
    channel: Channel,
    market: string,
    since: SinceSpec,
    joinedAt: { epoch: string; seq: number },
  ): Promise<HistoryRead<unknown>> | undefined;
  /** The merged snapshot, written as the stream's. */
  deliver(stream: AnyStream, frame: Frame): void;
  /** The read failed: the error goes out and the subscription is left. */
  fail(stream: AnyStream, error: ServerMessage): void;
}

interface DataMessage extends MessagePosition, HeldMessage<unknown> {}

const messageOf = (frame: Frame): DataMessage => JSON.parse(frame.text) as DataMessage;

type History = ServesHistory<ChannelUpstream, unknown, unknown>;

class Seam {
  readonly #held: DataMessage[] = [];
  #join: DataMessage | undefined;
  cancelled = false;

  constructor(
    readonly stream: AnyStream,
    readonly history: History,
    readonly since: SinceSpec,
    readonly id: RequestId | undefined,
    readonly session: SeamSession,
    readonly done: () => void,
  ) {}

  /** Reads at once when the stream has a state; else its first message is the join. */
  start(): void {
    if (this.stream.hasState) this.#joined(messageOf(this.stream.snapshotFrame()));
  }

  /** A live message of the stream, held until the snapshot is sent. */
  hold(frame: Frame): void {
    const message = messageOf(frame);
    if (this.#join === undefined) {
      this.#joined(message);
      return;
    }
    this.#held.push(message);
  }

  #joined(message: DataMessage): void {
    this.#join = message;
    const { channel, market } = this.stream;
    const read = this.session.read?.(channel, market, this.since, message);
    if (read === undefined) {
      this.#failed('upstream_unavailable', 'history is not offered by this relay');
      return;
    }
    read.then(
      (result) => {
        if (this.cancelled) return;
        if (!result.ok)
          this.#failed(result.reason === 'too_many' ? 'limit_exceeded' : 'bad_request', result.message);
        else this.#send(result);
      },
      (error: unknown) => {
        if (this.cancelled) return;
        const why = error instanceof Error ? error.message : 'upstream unavailable';
        this.#failed(
          'upstream_unavailable',
          `the ${channel} since ${this.#sinceText()} could not be read: ${why}`,
        );
      },
    );
  }

  #send(read: unknown): void {
    const join = this.#join!;
    const data = this.history.snapshotOf(read, this.since, join.data, this.#held);
    const at = this.#held.at(-1) ?? join;
    const position = { epoch: at.epoch, seq: at.seq, ts: at.ts, rts: at.rts };
    // The channel's checksum, if its messages carry one, of the data the snapshot holds.
    const codec = codecs[this.stream.channel] as StreamCodec<unknown, unknown>;
    this.done();
    this.session.deliver(
      this.stream,
      toFrame(dataMessage(this.stream, 'snapshot', data, position, codec.checksum?.(data))),
    );
  }

  #sinceText(): string {
    return this.since.kind === 'time' ? this.since.text : `${this.history.idName ?? 'id'} ${this.since.id}`;
  }

  #failed(code: 'bad_request' | 'limit_exceeded' | 'upstream_unavailable', message: string): void {
    this.done();
    const { channel, market } = this.stream;
    this.session.fail(this.stream, {
      type: 'error',
      ...(this.id === undefined ? {} : { id: this.id }),
      code,
      message,
      channel,
      market,
    });
  }
}

/** One session's `since` subscriptions still waiting for their history, by stream key. */
export class SinceSeams {
  readonly #session: SeamSession;
  readonly #seams = new Map<string, Seam>();

  constructor(session: SeamSession) {
    this.#session = session;
  }

  /**
   * Takes the joined streams of a request with `since` over (their first message is the merged
   * snapshot); returns those left to the usual first messages (all of them without `since`, and
   * any of a channel that serves no history, which the request's check refuses before this).
   */
  begin(
    since: SinceSpec | undefined,
    id: RequestId | undefined,
    joined: readonly JoinedStream[],
  ): JoinedStream[] {
    if (since === undefined) return [...joined];
    const left: JoinedStream[] = [];
    for (const joinedStream of joined) {
      const { stream } = joinedStream;
      const history = historyOf(stream.channel);
      // The request was checked against its channel (./subscription.ts): this is only for the types.
      if (history === undefined) {
        left.push(joinedStream);
        continue;
      }
      this.drop(stream.key);
      const seam: Seam = new Seam(stream, history, since, id, this.#session, () => {
        if (this.#seams.get(stream.key) === seam) this.#seams.delete(stream.key);
      });
      this.#seams.set(stream.key, seam);
      seam.start();
    }
    return left;
  }

  /** True when `frame` is held for a snapshot still being put together. */
  hold(stream: AnyStream, frame: Frame): boolean {
    const seam = this.#seams.get(stream.key);
    if (seam === undefined) return false;
    seam.hold(frame);
    return true;
  }

  /** The stream was left or ended: its read's outcome is no longer wanted. */
  drop(key: string): void {
    const seam = this.#seams.get(key);
    if (seam === undefined) return;
    seam.cancelled = true;
    this.#seams.delete(key);
  }

  clear(): void {
    for (const key of [...this.#seams.keys()]) this.drop(key);
  }
}
