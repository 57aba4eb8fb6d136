/**
 * @module bench/lib/book-polls
 * What the poll benches read of a relay child's polls (bench/children/relay.ts `polls` and
 * `pollDurationMs`: counts and summed times by `<kind>:<outcome>`), and the requests in flight they
 * allow the relay and its floor. Shared by the poll-capacity scenario and the side-by-side benches.
 */

/** A relay child's poll counters (or summed poll times, ms), by `<kind>:<outcome>`. */
export type PollCounts = Record<string, number>;

/** Book polls with `outcome` between two readings of a relay child's counters. */
export function bookPolls(before: PollCounts, after: PollCounts, outcome: 'ok' | 'error'): number {
  const name = `book:${outcome}`;
  return (after[name] ?? 0) - (before[name] ?? 0);
}

/**
 * Requests in flight at most, the relay's (`--upstream-concurrency`) and the floor's pool: enough
 * that a simulator slowed by a loaded machine does not hold the relay below its asked rate. At 405
 * books a second, 64 did once answers took over 158 ms (Little's law), as they did under a load
 * average of 12 (233 ms a poll: 234 polls a second made); 128 allow 316 ms.
 */
export const UPSTREAM_CONNECTIONS = 128;
