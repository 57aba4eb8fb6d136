/**
 * @module channels/history
 * What a subscription of a channel that serves history asks for with `since` (docs/protocol.md
 * "History since a time"): every entry since a time, or after one entry named by its id. Node-free:
 * the channel's definition checks a value into one (./definition.ts `history`), the relay reads the
 * history it names (relay/channels/relay-definition.ts `history`).
 */

/** Every entry after this time (inclusive) or after this entry of upstream's listing (exclusive). */
export type SinceSpec = { kind: 'time'; at: number; text: string } | { kind: 'id'; id: string };

export type SinceCheck = { ok: true; since: SinceSpec } | { ok: false; message: string };

/** One spelling per `since`, for sharing one read among the subscribers asking the same. */
export function sinceKey(since: SinceSpec): string {
  return since.kind === 'time' ? `t:${since.at}` : `i:${since.id}`;
}
