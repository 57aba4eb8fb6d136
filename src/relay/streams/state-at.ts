/**
 * @module relay/streams/state-at
 * A stream's state at a time read from its record (docs/history.md "Since", docs/protocol.md
 * "Replay"): the record up to the time folded (./recorded-state.ts), and that state as the one
 * `snapshot` a client would have been sent for it, at the position of the last message at or
 * before the time. `since` and `replay` both start a stream from it.
 */
import type { Channel } from '../../../packages/protocol/src/protocol/messages.ts';
import type { HistoryStore, RecordedMessage } from '../../history/store.ts';
import { codecs, type StreamCodec } from '../channels/codecs.ts';
import { type FoldedState, foldRecorded } from './recorded-state.ts';

/** The state of stream `key` after its last recorded message with `rts` at or before `at` (epoch ms). */
export async function foldStateAt(
  store: HistoryStore,
  key: string,
  at: number,
): Promise<FoldedState | undefined> {
  const extent = await store.extent(key);
  if (extent === undefined || extent.oldest > at) return undefined;
  let folded: FoldedState | undefined;
  for await (const message of store.read({ stream: key, from: extent.oldest, to: at + 1 }))
    folded = foldRecorded(folded, message);
  return folded;
}

/**
 * `folded` as a recorded `snapshot`: the state as its data, at the position and times of the message
 * it stands after, with the checksum that message carried (the state's own, by the channel's codec).
 */
export function snapshotRecord(folded: FoldedState): RecordedMessage {
  const { at, state } = folded;
  const codec = codecs[at.channel as Channel] as StreamCodec<unknown, unknown>;
  return { ...at, type: 'snapshot', data: JSON.stringify(state), checksum: codec.checksum?.(state) };
}
