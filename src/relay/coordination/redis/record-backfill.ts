/**
 * @module relay/coordination/redis/record-backfill
 * A new lease holder records again what the holder before it wrote to the stream log last
 * (docs/cluster.md "One history for the cluster"): a holder records only once its fenced write to
 * Redis succeeded, and writes its record within its flush window, so a holder killed outright takes
 * its last window of the record with it, while every message of that window is in the Redis log,
 * written by the same commit. On taking a target over from another holder, the new one hands the
 * log's updates of the last `BACKFILL_MS` before that holder's last change to its recorder
 * (NumberedRecord.takenOver); the shared store's unique key keeps what was recorded already once.
 * A hand-over after a SIGKILL so leaves no hole in the record, unless the log itself lost those
 * updates.
 */
import { type Frame, toFrame } from '../../streams/frame.ts';
import { type ClusterCodec, fits } from './codecs.ts';
import { parseJson, streamMessage } from './stream-batch.ts';
import type { StoredTarget, StreamLog } from './stream-log.ts';

/**
 * How far back before the last holder's last change (the stored state's `rts`: no update was
 * logged after it) the log is recorded again: past the longest flush window
 * (`--history-flush-ms`, 5 s at most) and a write still in flight when it was killed.
 */
const BACKFILL_MS = 7_000;

/** The most updates per stream read back from the log (a stream polled every 25 ms fills 7 s with 280). */
const BACKFILL_UPDATES = 300;

/** The logged updates, by stream, that a new holder of a target records again: `loggedBefore`. */
export type LoggedBefore = (stored: StoredTarget) => Promise<ReadonlyMap<string, readonly Frame[]>>;

/**
 * Reads back from the log the updates of `stored`'s streams within `BACKFILL_MS` of its last change,
 * validated as the followers validate them. Redis away: none (what the killed holder lost stays a
 * hole of `seq`, which `replay` marks).
 */
export function loggedBefore<State, Delta>(
  log: StreamLog,
  target: { key: string; market: string; codec: ClusterCodec<State, Delta> },
): LoggedBefore {
  const { key, market, codec } = target;
  return async (stored) => {
    const found = new Map<string, readonly Frame[]>();
    const wanted = codec.streams.flatMap(({ field }) => {
      const position = stored.positions.get(field);
      const afterSeq = Math.max(0, (position?.seq ?? 0) - BACKFILL_UPDATES);
      return position === undefined ? [] : [{ stream: field, afterSeq }];
    });
    const loaded = wanted.length === 0 ? undefined : await log.load(key, wanted);
    if (loaded === undefined) return found;
    const since = Date.parse(stored.rts) - BACKFILL_MS;
    for (const { field, depth } of codec.streams) {
      const epoch = stored.positions.get(field)?.epoch;
      if (epoch === undefined) continue;
      const frames = (loaded.history.get(field) ?? []).flatMap(({ seq, text }) => {
        const message = parseJson(streamMessage, text);
        if (message === undefined || !fits(codec, message, { market, depth }, { epoch, seq })) return [];
        return Date.parse(message.rts) >= since ? [toFrame(message)] : [];
      });
      found.set(field, frames);
    }
    return found;
  };
}
