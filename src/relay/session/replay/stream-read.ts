/**
 * @module relay/session/replay/stream-read
 * What a replay sends of one stream (docs/protocol.md "Replay"): its state at the range's start as
 * a `snapshot` (relay/streams/state-at.ts: the last recorded message at or before `from`, its
 * position, times and checksum), timed at `from`; then every recorded message after that one in the
 * range, as sent. A stream with no state at `from` (nothing recorded before it, or the record cut
 * there) starts at its first recorded `snapshot` in the range: the updates before it apply to a
 * state the client never got.
 */
import type { HistoryStore } from '../../../history/store.ts';
import { foldStateAt, snapshotRecord } from '../../streams/state-at.ts';
import type { TimedRecord } from './merge.ts';

/** Stream `key`'s replay over `rts` in [from, to) (epoch ms), in `rts` order. */
export async function* streamFromState(
  store: HistoryStore,
  key: string,
  from: number,
  to: number,
): AsyncGenerator<TimedRecord> {
  const folded = await foldStateAt(store, key, from);
  let started = folded !== undefined;
  if (folded !== undefined) yield { record: snapshotRecord(folded), rts: from };
  for await (const record of store.read({ stream: key, from, to })) {
    // Already in the state: recorded at `from` itself.
    if (folded !== undefined && record.epoch === folded.at.epoch && record.seq <= folded.at.seq) continue;
    if (!started && record.type !== 'snapshot') continue;
    started = true;
    yield { record, rts: Date.parse(record.rts) };
  }
}
