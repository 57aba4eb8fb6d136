/**
 * @module relay/session/since-seam
 * A subscription with `since` of a channel that serves history (docs/protocol.md "History since a
 * time"; the channel's `history`, channels/relay-definition.ts): the session joins the live stream
 * first and holds that subscriber's live messages while the history is read
 * (relay/session/since-reads.ts), then sends one snapshot, which the channel makes of the history,
 * the stream's data at the join and the held messages, at the position of the last held message;
 * live updates go on from there. The read starts only once the stream has a state and after the
 * join, so what it reads reaches past the join point and the held messages cover everything after it.
 * `SinceSeams` picks each stream's seam: a time, on a relay that records, is answered from the record
 * (./record-seam.ts), which hands over to the channel's own history where the record does not reach
 * back: upstream's, or another stream's record where that reaches back (candles of `probability`
 * from the record of the `probabilities` map).
 * Nothing goes out until the request releases it, once its `subscribed` (which says where the
 * history starts) is written.
 */
import type { SinceSpec } from '../../../packages/protocol/src/channels/history.ts';
import { channelDefinitions, isDefinedChannel } from '../../../packages/protocol/src/channels/registry.ts';
import { streamKey } from '../../../packages/protocol/src/channels/stream-key.ts';
import type { Channel } from '../../../packages/protocol/src/protocol/channels.ts';
import type { HistoryCoverage } from '../../../packages/protocol/src/protocol/history.ts';
import type { RequestId, ServerMessage } from '../../../packages/protocol/src/protocol/messages.ts';
import type { RecordReader } from '../../history/recorder.ts';
import { codecs, type StreamCodec } from '../channels/codecs.ts';
import type { HeldMessage, HistoryRead, RecordReach, ServesHistory } from '../channels/relay-definition.ts';
import { type ChannelUpstream, historyOf } from '../channels/relay-registry.ts';
import { dataMessage, type Frame, type MessagePosition, toFrame } from '../streams/frame.ts';
import type { AnyStream } from '../streams/stream.ts';
import { type PendingSince, RecordSeam } from './record-seam.ts';
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
  /** The relay's record, when it records: a time is read from it. */
  readonly record?: RecordReader | undefined;
  /** A message of the history, written as the stream's (past the seams). */
  deliver(stream: AnyStream, frame: Frame): void;
  /** The read failed: the error goes out and the subscription is left. */
  fail(stream: AnyStream, error: ServerMessage): void;
}

interface DataMessage extends MessagePosition, HeldMessage<unknown> {}

const messageOf = (frame: Frame): DataMessage => JSON.parse(frame.text) as DataMessage;

type History = ServesHistory<ChannelUpstream, unknown, unknown>;

class Seam implements PendingSince {
  readonly #held: DataMessage[] = [];
  #join: DataMessage | undefined;
  cancelled = false;
  readonly coverage: Promise<HistoryCoverage | undefined>;
  #settled!: (coverage: HistoryCoverage | undefined) => void;
  /** What goes out once released: the snapshot, or the error. */
  #outcome: (() => void) | undefined;
  #released = false;

  constructor(
    readonly stream: AnyStream,
    readonly history: History,
    readonly since: SinceSpec,
    readonly id: RequestId | undefined,
    readonly session: SeamSession,
    readonly done: () => void,
  ) {
    this.coverage = new Promise((resolve) => {
      this.#settled = resolve;
    });
  }

  release(): void {
    this.#released = true;
    this.#settle();
  }

  cancel(): void {
    this.cancelled = true;
    this.#settled(undefined);
  }

  /** The read is done: its outcome goes out once `subscribed` has. */
  #ready(coverage: HistoryCoverage | undefined, outcome: () => void): void {
    this.#outcome = outcome;
    this.#settled(coverage);
    this.#settle();
  }

  #settle(): void {
    if (!this.#released || this.cancelled || this.#outcome === undefined) return;
    const outcome = this.#outcome;
    this.#outcome = undefined;
    outcome();
  }

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
      this.#ready(undefined, () =>
        this.#failed('upstream_unavailable', 'history is not offered by this relay'),
      );
      return;
    }
    read.then(
      (result) => {
        if (this.cancelled) return;
        if (!result.ok) {
          const code = result.reason === 'too_many' ? 'limit_exceeded' : 'bad_request';
          this.#ready(undefined, () => this.#failed(code, result.message));
        } else this.#ready(this.#coverageOf(result.startsAt), () => this.#send(result));
      },
      (error: unknown) => {
        if (this.cancelled) return;
        const why = error instanceof Error ? error.message : 'upstream unavailable';
        this.#ready(undefined, () =>
          this.#failed(
            'upstream_unavailable',
            `the ${channel} since ${this.#sinceText()} could not be read: ${why}`,
          ),
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

  /** Complete unless upstream's listing ended after the time asked (`startsAt`, ms). */
  #coverageOf(startsAt: number | undefined): HistoryCoverage {
    if (this.since.kind !== 'time')
      return { from: new Date(startsAt ?? Date.now()).toISOString(), complete: true };
    if (startsAt === undefined || startsAt <= this.since.at) return { from: this.since.text, complete: true };
    return { from: new Date(startsAt).toISOString(), complete: false };
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

/** A request's `since` subscriptions, joined: the history waits for `subscribed` (`ready`, then `release`). */
export interface SinceBegun {
  /** The streams left to the usual first messages. */
  left: JoinedStream[];
  /** Where the answers start, all together (undefined when every one failed); then `release`. */
  ready: Promise<HistoryCoverage | undefined>;
  release(): void;
}

/** One session's `since` subscriptions still waiting for their history, by stream key. */
export class SinceSeams {
  readonly #session: SeamSession;
  readonly #seams = new Map<string, PendingSince>();
  /** The streams whose history is under way: none, and no live message need be looked at here. */
  readonly underWay: ReadonlyMap<string, PendingSince> = this.#seams;

  constructor(session: SeamSession) {
    this.#session = session;
  }

  /**
   * Takes the joined streams of a request with `since` over (their first messages are the
   * history's, once released); undefined for a request without `since`. A time is read from the
   * relay's record when it records (./record-seam.ts), a channel that reads upstream's history
   * (or another stream's record) reading it for what the record does not reach; an `activity_id`
   * is read by the channel's history alone (trades: its record's run, upstream for the rest).
   */
  begin(
    since: SinceSpec | undefined,
    id: RequestId | undefined,
    joined: readonly JoinedStream[],
  ): SinceBegun | undefined {
    if (since === undefined) return undefined;
    const left: JoinedStream[] = [];
    const begun: PendingSince[] = [];
    for (const joinedStream of joined) {
      const { stream } = joinedStream;
      const seam = this.#seamOf(stream, since, id);
      if (seam === undefined) {
        left.push(joinedStream);
        continue;
      }
      begun.push(seam);
    }
    return {
      left,
      ready: Promise.all(begun.map((seam) => seam.coverage)).then(mergedCoverage),
      release: () => {
        for (const seam of begun) seam.release();
      },
    };
  }

  #seamOf(stream: AnyStream, since: SinceSpec, id: RequestId | undefined): PendingSince | undefined {
    const history = historyOf(stream.channel);
    const record = this.#session.record;
    this.drop(stream.key);
    let seam: PendingSince | undefined;
    const done = () => {
      if (this.#seams.get(stream.key) === seam) this.#seams.delete(stream.key);
    };
    const upstreamSeam = (): Seam | undefined => {
      if (history === undefined) return undefined;
      const read = new Seam(stream, history, since, id, this.#session, done);
      read.start();
      return read;
    };
    if (since.kind === 'time' && record !== undefined) {
      const session = {
        deliver: (target: AnyStream, frame: Frame) => this.#session.deliver(target, frame),
        fail: (target: AnyStream, message: string) =>
          this.#session.fail(target, {
            type: 'error',
            ...(id === undefined ? {} : { id }),
            code: 'upstream_unavailable',
            message,
            channel: target.channel,
            market: target.market,
          }),
      };
      const reach = history?.recordOnly?.(stream.market, since);
      const fallback = upstreamTakes(stream, since)
        ? async () => upstreamSeam()
        : reach === undefined
          ? undefined
          : async () => ((await reaches(record, reach)) ? upstreamSeam() : undefined);
      seam = new RecordSeam(stream, since, record, session, done, fallback);
    } else seam = upstreamSeam();
    // The request was checked against its channel (./subscription.ts): none is left without.
    if (seam !== undefined) this.#seams.set(stream.key, seam);
    return seam;
  }

  /** True when `frame` is held for a history still being put together. */
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
    seam.cancel();
    this.#seams.delete(key);
  }

  clear(): void {
    for (const key of [...this.#seams.keys()]) this.drop(key);
  }
}

/** Whether upstream's history of the stream's channel takes `since` (its definition's check, now). */
function upstreamTakes(stream: AnyStream, since: Extract<SinceSpec, { kind: 'time' }>): boolean {
  if (!isDefinedChannel(stream.channel)) return false;
  return (
    channelDefinitions[stream.channel].history?.check(since.text, Date.now(), [stream.market]).ok === true
  );
}

/** Whether the record of `reach`'s stream reaches back to its `from` (the recorder's buffer written first). */
async function reaches(record: RecordReader, reach: RecordReach): Promise<boolean> {
  await record.flush();
  const extent = await record.store.extent(streamKey(reach.channel, reach.streamId));
  return extent !== undefined && extent.oldest <= reach.from;
}

/** One `history` for a request's streams: complete only if each is, from the latest start. */
function mergedCoverage(coverages: readonly (HistoryCoverage | undefined)[]): HistoryCoverage | undefined {
  let merged: HistoryCoverage | undefined;
  for (const coverage of coverages) {
    if (coverage === undefined) continue;
    if (merged === undefined) merged = { ...coverage };
    else {
      if (Date.parse(coverage.from) > Date.parse(merged.from)) merged.from = coverage.from;
      merged.complete &&= coverage.complete;
    }
  }
  return merged;
}
