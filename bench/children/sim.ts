/**
 * @module bench/children/sim
 * The upstream simulator in its own process, so that its CPU never counts as the relay's. Reports
 * its market ids and counts the requests it serves (scenario 4, upstream load).
 */

import { startSimulator } from '../../src/sim/server.ts';
import { serveIpc } from '../lib/ipc.ts';
import { restCatalogueOf } from '../lib/rest-load.ts';
import { sampleUsage } from '../lib/usage.ts';

const sim = await startSimulator({
  markets: Number(process.env.BENCH_SIM_MARKETS ?? 60),
  seed: 1,
  tickMs: Number(process.env.BENCH_SIM_TICK_MS ?? 100),
  requestLogLimit: 1_000_000,
  // The default profile compressing as asked (poll-capacity: the same answers, compressed).
  ...(process.env.BENCH_SIM_COMPRESSED === '1' ? { compression: 'as-asked' as const } : {}),
});

/** Markets with a two-sided quote: their books and prices move on every tick. */
function busyMarkets(): string[] {
  const withoutPrice = new Set(sim.market.marketIdsWithoutPriceData());
  return sim.market.activeMarketIds().filter((id) => !withoutPrice.has(id));
}

serveIpc({
  ready: () => ({ url: sim.url, markets: busyMarkets() }),
  /** The users and held markets the `rest` scenario builds its paths from. */
  restCatalogue: () => restCatalogueOf(sim.market),
  /** Books stop changing (scenario 3: idle subscribed connections). */
  freeze: () => sim.market.setBookChanging(false),
  unfreeze: () => sim.market.setBookChanging(true),
  usage: () => sampleUsage(),
  clearRequests: () => sim.clearRequests(),
  /** Requests answered in the busiest 1 s window since `clearRequests`, by the simulator's clock. */
  busiestSecond: () => busiestSecond(sim.requests.map((entry) => entry.at)),
  requests: () => {
    const byPath: Record<string, number> = {};
    for (const entry of sim.requests) {
      const kind = entry.path.startsWith('/api/market-data/') ? '/api/market-data/:id' : entry.path;
      byPath[kind] = (byPath[kind] ?? 0) + 1;
    }
    return { total: sim.requests.length, byPath };
  },
});

function busiestSecond(times: number[]): number {
  times.sort((a, b) => a - b);
  let most = 0;
  for (let start = 0, end = 0; end < times.length; end += 1) {
    while (times[end]! - times[start]! >= 1_000) start += 1;
    most = Math.max(most, end - start + 1);
  }
  return most;
}
