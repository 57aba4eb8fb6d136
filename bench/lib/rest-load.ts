/**
 * @module bench/lib/rest-load
 * The `rest` scenario's streams: distinct public GET paths the simulator answers, built from its
 * users and the markets they hold positions in.
 */

import { canonicalRestPath } from '../../packages/protocol/src/protocol/rest-paths.ts';
import type { MarketSimulation } from '../../src/sim/server.ts';

export interface RestCatalogue {
  usernames: string[];
  /** Active markets someone holds a position in (their holders lists are not empty). */
  heldMarkets: string[];
}

/**
 * Simulator markets for `streams` books: about 86% of them are busy (two-sided, moving on every
 * tick), and the paths need markets someone holds.
 */
export function simMarketsFor(streams: number): number {
  return Math.ceil(streams * 1.25) + 50;
}

/** What the paths are built from, in the simulator's order. */
export function restCatalogueOf(sim: MarketSimulation): RestCatalogue {
  const held = new Set(sim.holdings.map((holding) => holding.market.id));
  return {
    usernames: sim.users.map((user) => user.username),
    heldMarkets: sim.activeMarketIds().filter((id) => held.has(id)),
  };
}

/**
 * `count` distinct public paths, in their canonical spelling, from the users' and the held markets'
 * paths taken in turn (so that a smaller count keeps the mix); throws when there are not enough.
 */
export function restLoadPaths(
  usernames: readonly string[],
  markets: readonly string[],
  count: number,
): string[] {
  const userPaths = usernames.flatMap((name) => {
    const user = `/api/users/${encodeURIComponent(name)}`;
    // Paths whose bodies move with prices first: the generator decodes its first client's frames.
    return [
      `${user}/positions`,
      `${user}/positions?include_closed=true`,
      `${user}/profile`,
      `${user}/net-worth-history`,
      `${user}/stats`,
      `${user}/activity`,
      user,
    ];
  });
  const marketPaths = markets.flatMap((id) => [
    `/api/markets/${id}`,
    `/api/markets/${id}/activity`,
    `/api/markets/${id}/holders?type=YES`,
    `/api/markets/${id}/holders?type=NO`,
    `/api/markets/${id}/comments`,
  ]);
  const paths = new Set<string>();
  for (let i = 0; paths.size < count && i < Math.max(userPaths.length, marketPaths.length); i++) {
    for (const path of [userPaths[i], marketPaths[i]]) {
      if (path === undefined || paths.size >= count) continue;
      const canonical = canonicalRestPath(path);
      if (!canonical.ok) throw new Error(`${path}: ${canonical.message}`);
      paths.add(canonical.value.path);
    }
  }
  if (paths.size < count)
    throw new Error(
      `only ${paths.size} distinct paths from ${usernames.length} users and ${markets.length} markets`,
    );
  return [...paths];
}
