/**
 * @module channels/trades/since
 * A `trades` subscription's `since` (docs/protocol.md "History since a time"): an ISO 8601 time or
 * an `activity_id`, and the bounds the relay reads history within. Node-free: the relay checks a
 * request with it and the SDK checks its option before sending.
 */
import type { SinceCheck } from '../history.ts';

/** How far back `since` may reach. */
export const SINCE_MAX_AGE_MS = 24 * 60 * 60 * 1000;
/** Trades one `since` snapshot holds at most; more since then is refused (`limit_exceeded`). */
export const SINCE_MAX_TRADES = 10_000;
/** Longest `activity_id` a `since` may name. */
export const SINCE_MAX_ID_LENGTH = 128;

/** A value that starts as a date does is a time, and must be a whole one with its zone. */
const DATE_START = /^\d{4}-\d{2}-\d{2}/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Reads `value` as a `since` at relay time `now`: a time must be neither ahead of `now` nor more
 * than SINCE_MAX_AGE_MS behind it; anything that does not start as a date is an `activity_id`.
 */
export function checkSince(value: unknown, now: number): SinceCheck {
  if (typeof value !== 'string' || value === '' || value.length > SINCE_MAX_ID_LENGTH)
    return {
      ok: false,
      message: `"since": expected an ISO 8601 time or an activity_id (1 to ${SINCE_MAX_ID_LENGTH} characters)`,
    };
  if (!DATE_START.test(value)) return { ok: true, since: { kind: 'id', id: value } };
  const at = Date.parse(value);
  if (!ISO_TIME.test(value) || Number.isNaN(at))
    return {
      ok: false,
      message: `"since": ${JSON.stringify(value)} is not an ISO 8601 time with its zone (such as 2025-06-01T12:00:00Z)`,
    };
  if (at > now) return { ok: false, message: `"since": ${value} is in the future` };
  if (at < now - SINCE_MAX_AGE_MS)
    return { ok: false, message: `"since": ${value} is more than 24 hours back (the bound)` };
  return { ok: true, since: { kind: 'time', at, text: value } };
}
