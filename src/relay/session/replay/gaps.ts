/**
 * @module relay/session/replay/gaps
 * Where a replayed record has a hole (docs/protocol.md "Replay"), read from the record itself so
 * that any history store serves: a stream's messages are numbered contiguously within an epoch, so
 * two consecutive recorded messages of a stream whose `epoch` differs (the relay restarted, the
 * stream was let go and held again, a lease moved) or whose `seq` is not the next (a write batch
 * lost, a message not recorded) have a hole between them. A replayed stream starts with its state at
 * the range's start, timed at the start (./stream-read.ts); one that had no state there starts at its
 * first `snapshot` after it: nothing usable of it was recorded between the range's start and that
 * snapshot. A stream with no message in the range at all is reported as one hole over the whole range (a
 * stream sends nothing while its state does not change, so for a quiet stream that is the honest
 * answer too: the replay has nothing to give of it). Pure.
 */
import type { RecordedMessage } from '../../../history/store.ts';

/** Why the record has a hole, where the record says (ReplayGapMessage `reason`). */
export type GapReason = 'epoch_changed';

/** Nothing was recorded of `market` in [from, to) (epoch milliseconds). */
export interface Gap {
  market: string;
  from: number;
  to: number;
  reason?: GapReason;
}

interface Last {
  epoch: string;
  seq: number;
  rts: number;
}

export class GapFinder {
  readonly #rangeFrom: number;
  readonly #rangeTo: number;
  /** The last recorded message seen of each stream, by stream key. */
  readonly #last = new Map<string, Last>();

  constructor(rangeFrom: number, rangeTo: number) {
    this.#rangeFrom = rangeFrom;
    this.#rangeTo = rangeTo;
  }

  /** The hole the record has just before `record`, if any; `record` is remembered as the stream's last. */
  before(record: RecordedMessage, rts: number): Gap | undefined {
    const last = this.#last.get(record.stream);
    this.#last.set(record.stream, { epoch: record.epoch, seq: record.seq, rts });
    if (last === undefined)
      return rts > this.#rangeFrom ? { market: record.market, from: this.#rangeFrom, to: rts } : undefined;
    if (last.epoch !== record.epoch)
      return { market: record.market, from: last.rts, to: rts, reason: 'epoch_changed' };
    return record.seq > last.seq + 1 ? { market: record.market, from: last.rts, to: rts } : undefined;
  }

  /** The whole range as a hole for each of `streams` of which no message was seen. */
  unseen(streams: readonly { market: string; key: string }[]): Gap[] {
    return streams
      .filter((stream) => !this.#last.has(stream.key))
      .map((stream) => ({ market: stream.market, from: this.#rangeFrom, to: this.#rangeTo }));
  }
}
