/**
 * @module relay/coordination/redis/numbered-record
 * The lease holder's record of what it numbers for the cluster (docs/cluster.md "One history for
 * the cluster"): with a history store the cluster shares, every message the holder numbers, on
 * every stream of the target whether or not anyone here subscribes, is handed to the recorder once,
 * by the one relay that numbered it; the followers serving it record nothing. A message written
 * twice anyway (a hand-over's overlap, a new holder's back-fill: ./record-backfill.ts) is kept once
 * by the store's unique key.
 */

import { streamKey } from '../../../../packages/protocol/src/channels/stream-key.ts';
import type { BookDepth } from '../../../../packages/protocol/src/protocol/messages.ts';
import type { NumberedChannel } from '../../channels/relay-registry.ts';
import type { RecordedSubject } from '../../streams/recorded.ts';
import type { TargetStream } from '../codecs.ts';
import type { NumberedRecordSink } from '../stream-numbering.ts';
import type { OwnEntry } from './numbering.ts';
import type { LoggedBefore } from './record-backfill.ts';
import type { StoredTarget } from './stream-log.ts';

export class NumberedRecord {
  readonly #sink: NumberedRecordSink;
  readonly #subjects: ReadonlyMap<string, RecordedSubject>;
  readonly #loggedBefore: LoggedBefore | undefined;

  constructor(
    sink: NumberedRecordSink,
    channel: NumberedChannel,
    market: string,
    streams: readonly TargetStream[],
    loggedBefore?: LoggedBefore,
  ) {
    this.#sink = sink;
    this.#loggedBefore = loggedBefore;
    this.#subjects = new Map(
      streams.map(({ field, depth }) => [field, subjectOf(channel, market, depth)] as const),
    );
  }

  /**
   * This relay took the target over from the holder that wrote `stored`: what that holder wrote
   * last is recorded again from the log, in case it never reached the record (./record-backfill.ts).
   */
  takenOver(stored: StoredTarget): void {
    void this.#loggedBefore?.(stored).then((logged) => {
      for (const [field, frames] of logged) {
        const subject = this.#subjects.get(field);
        if (subject !== undefined) for (const frame of frames) this.#sink(subject, frame, 'update');
      }
    });
  }

  /** The messages of polls written to the stream log (a confirmation sends none, so records none). */
  record(written: readonly OwnEntry<unknown>[]): void {
    for (const entry of written) {
      const subject = this.#subjects.get(entry.stream);
      if (subject === undefined || entry.frame === undefined || entry.kind === 'confirm') continue;
      this.#sink(subject, entry.frame, entry.kind === 'reset' ? 'snapshot' : 'update');
    }
  }
}

function subjectOf(channel: NumberedChannel, market: string, depth: BookDepth | undefined): RecordedSubject {
  return { key: streamKey(channel, market, depth), channel, market, depth, group: undefined };
}
