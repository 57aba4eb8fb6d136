/**
 * @module relay/session/wildcard-plan
 * What a `"*"` subscription (./wildcard.ts) does with a new list of active markets, as a pure
 * function: which markets it leaves, which it tries to join (within the room the connection has
 * left) and which stay out for lack of room. Admission and the joining itself are the caller's.
 */

/** What a wildcard of one channel keeps between two lists of active markets. */
export interface WildcardTracking {
  /** Markets it joined and still holds. */
  owned: ReadonlySet<string>;
  /** Markets of the previous list (all of which it dealt with: joined, waiting, named, dropped). */
  covered: ReadonlySet<string>;
  /** Active markets it could not join yet. */
  waiting: ReadonlySet<string>;
}

export interface WildcardPlan {
  /** Held markets no longer active: left, and announced. */
  leave: string[];
  /** Markets to join, waiting ones first, then new ones in the list's order; at most `room`. */
  join: string[];
  /** Markets to join that do not fit in the room left. */
  noRoom: string[];
  /** The markets covered from now on: the list itself. */
  covered: Set<string>;
  /** The waiting markets that still wait for a turn (the others left, or the client named them). */
  stillWaiting: Set<string>;
}

/**
 * The plan for `active` (the catalogue's active markets, in its order). `namedByClient`: whether
 * the client holds the market's stream by name (the wildcard neither joins nor leaves those).
 */
export function planWildcard(
  active: readonly string[],
  tracking: WildcardTracking,
  namedByClient: (market: string) => boolean,
  room: number,
): WildcardPlan {
  const listed = new Set(active);
  const leave = [...tracking.owned].filter((market) => !listed.has(market));
  const stillWaiting = new Set(
    [...tracking.waiting].filter((market) => listed.has(market) && !namedByClient(market)),
  );
  const fresh = [...listed].filter(
    (market) =>
      !tracking.covered.has(market) &&
      !tracking.owned.has(market) &&
      !stillWaiting.has(market) &&
      !namedByClient(market),
  );
  const candidates = [...stillWaiting, ...fresh];
  const fits = Math.max(0, room);
  return {
    leave,
    join: candidates.slice(0, fits),
    noRoom: candidates.slice(fits),
    covered: listed,
    stillWaiting,
  };
}
