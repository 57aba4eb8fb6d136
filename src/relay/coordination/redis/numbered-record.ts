/**
 * @module relay/coordination/redis/numbered-record
 * The lease holder's record of what it numbers for the cluster (docs/cluster.md "One history for
 * the cluster"): with a history store the cluster shares, every message the holder numbers, on
 * every stream of the target whether or not anyone here subscribes, is handed to the recorder once,
 * by the one relay that numbered it; the followers serving it record nothing. A message written
 * twice anyway (a hand-over's overlap) is kept once by the store's unique key.
 *
 * A holder records a message only once the stream log has it, and its recorder writes every flush
 * window: a holder killed outright takes up to that window of the record with it, while the log
 * still has those updates. So a relay that takes a lease another left back-fills the record from
 * the log (`backFill`): every logged update of the epoch the log's position names, recorded again;
 * the store keeps what it already had once, so only what it lacked is added, text for text.
 */
import type { BookDepth } from '../../../../packages/protocol/src/protocol/messages.ts';
import { streamKey } from '../../../../packages/protocol/src/util/stream-key.ts';
import type { RecordedSubject } from '../../streams/recorded.ts';
import type { TargetStream } from '../codecs.ts';
import type { NumberedRecordSink } from '../stream-numbering.ts';
import { type ClusterCodec, loggedFrames } from './codecs.ts';
import type { OwnEntry } from './numbering.ts';
import type { StreamLog } from './stream-log.ts';

export class NumberedRecord {
  readonly #sink: NumberedRecordSink;
  readonly #market: string;
  readonly #streams: readonly TargetStream[];
  readonly #subjects: ReadonlyMap<string, RecordedSubject>;

  constructor(
    sink: NumberedRecordSink,
    channel: 'book' | 'price',
    market: string,
    streams: readonly TargetStream[],
  ) {
    this.#sink = sink;
    this.#market = market;
    this.#streams = streams;
    this.#subjects = new Map(
      streams.map(({ field, depth }) => [field, subjectOf(channel, market, depth)] as const),
    );
  }

  /** The messages of polls written to the stream log (a confirmation sends none, so records none). */
  record(written: readonly OwnEntry<unknown>[]): void {
    for (const entry of written) {
      const subject = this.#subjects.get(entry.stream);
      if (subject === undefined || entry.frame === undefined || entry.kind === 'confirm') continue;
      this.#sink(subject, entry.frame, entry.kind === 'reset' ? 'snapshot' : 'update');
    }
  }

  /**
   * Records again what the stream log keeps of `target`'s streams, as a new lease holder. A stream
   * whose log is not one contiguous run of its current epoch (a reset since, an entry unreadable)
   * is left as it is: its hole stays a marked gap rather than be filled with something inexact.
   */
  async backFill<State, Delta>(
    log: StreamLog,
    target: string,
    codec: ClusterCodec<State, Delta>,
  ): Promise<number> {
    const loaded = await log.load(
      target,
      this.#streams.map(({ field }) => ({ stream: field, afterSeq: 0 })),
    );
    const stored = loaded?.stored;
    if (loaded === undefined || stored === undefined) return 0;
    let recorded = 0;
    for (const { field, depth } of this.#streams) {
      const subject = this.#subjects.get(field);
      const position = stored.positions.get(field);
      const logged = loaded.history.get(field) ?? [];
      const first = logged[0];
      if (subject === undefined || position === undefined || first === undefined) continue;
      const stream = { market: this.#market, depth };
      const frames = loggedFrames(codec, stream, position.epoch, logged, first.seq - 1) ?? [];
      for (const { frame } of frames) this.#sink(subject, frame, 'update');
      recorded += frames.length;
    }
    return recorded;
  }
}

function subjectOf(channel: 'book' | 'price', market: string, depth: BookDepth | undefined): RecordedSubject {
  return { key: streamKey(channel, market, depth), channel, market, depth, group: undefined };
}
