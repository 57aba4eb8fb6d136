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

/** A whole ISO 8601 time with its zone: what a `since` that reads the relay's record takes. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Reads `value` as a `since` time of a channel whose history is the relay's record (docs/protocol.md
 * "History and replay"): a whole ISO 8601 time with its zone, not ahead of `now`, and no further
 * back than `maxAgeMs` (the record's retention).
 */
export function checkSinceTime(value: unknown, now: number, maxAgeMs: number): SinceCheck {
  const at = typeof value === 'string' && ISO_TIME.test(value) ? Date.parse(value) : Number.NaN;
  if (typeof value !== 'string' || Number.isNaN(at))
    return {
      ok: false,
      message: `"since": ${JSON.stringify(value)} is not an ISO 8601 time with its zone (such as 2025-06-01T12:00:00Z)`,
    };
  if (at > now) return { ok: false, message: `"since": ${value} is in the future` };
  if (at < now - maxAgeMs)
    return {
      ok: false,
      message: `"since": ${value} is past the record's retention (it keeps ${maxAgeMs / 1000} s)`,
    };
  return { ok: true, since: { kind: 'time', at, text: value } };
}
