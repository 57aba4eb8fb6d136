/**
 * @module bench/children/soak-relay
 * `npm run soak`'s relay: the public-deployment defaults (every limit as shipped), against an
 * embedded simulator in the same process whose faults the orchestrator switches on and off. Its
 * RSS and CPU are what the soak reports; the load comes from the orchestrator's process.
 */
import pino from 'pino';
import { startRelay } from '../../src/relay-server.ts';
import { serveIpc } from '../lib/ipc.ts';
import { sampleUsage } from '../lib/usage.ts';

/** The soak relay requires an API key, so that key guessing has something to guess. */
const API_KEY = 'soak-key';

const relay = await startRelay(
  {
    port: 0,
    host: '127.0.0.1',
    upstream: 'sim',
    bookPollMs: 250,
    pricePollMs: 250,
    upstreamConcurrency: 16,
    upstreamRps: 200,
    logLevel: 'silent',
    simMarkets: 30,
    simSeed: 1,
    apiKeys: [API_KEY],
    tuning: { simTickMs: 100 },
  },
  pino({ level: 'silent' }),
);
const sim = relay.sim!;

/** Markets with a two-sided quote: their books and prices move on every tick. */
function busyMarkets(): string[] {
  const withoutPrice = new Set(sim.market.marketIdsWithoutPriceData());
  return sim.market.activeMarketIds().filter((id) => !withoutPrice.has(id));
}

/** Close codes the relay decided (what its metric counts), since start. */
const closeCodes: Record<string, number> = {};
relay.events.on('connection:close', ({ code }) => {
  closeCodes[code] = (closeCodes[code] ?? 0) + 1;
});
/** Connections refused at the edge, by reason (what its metric counts), since start. */
const refusals: Record<string, number> = {};
relay.events.on('edge:refused', ({ reason }) => {
  refusals[reason] = (refusals[reason] ?? 0) + 1;
});

serveIpc({
  ready: () => ({ url: relay.url, key: API_KEY, markets: busyMarkets() }),
  usage: () => sampleUsage(),
  faults: (faults) => sim.setFaults(faults as Parameters<typeof sim.setFaults>[0]),
  state: () => ({
    connections: relay.ws.connections.size,
    statusViewers: relay.operations.statusFeed?.viewers ?? 0,
    statusViewersDropped: relay.operations.statusFeed?.dropped ?? 0,
    closeCodes: { ...closeCodes },
    refusals: { ...refusals },
  }),
});
process.on('SIGTERM', () => {
  void relay.close().finally(() => process.exit(0));
});
