/**
 * @module bench/upstream-bytes
 * `node --import tsx bench/upstream-bytes.ts`: bytes read from upstream per poll of each endpoint
 * the relay polls, before the relay asked for compression (no `Accept-Encoding`: the body as it is)
 * and now (`gzip, br`, through the relay's own upstream client, counting the bytes it received),
 * against a simulator that compresses as a CDN does when asked (the `terse` profile: br, else
 * gzip), 30 markets, a few hundred ticks in. Also gzip alone, and the CPU the client spends
 * decoding one body of each endpoint.
 */
import { get, request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startSimulator } from '../src/sim/server.ts';
import { UpstreamClient } from '../src/upstream/client.ts';

const sim = await startSimulator({ markets: 30, seed: 11, tickMs: 0, profile: 'terse' });
for (let tick = 0; tick < 400; tick++) sim.tick();
const client = new UpstreamClient({ baseUrl: sim.url, retries: 0 });
const received: number[] = [];
client.events.on('request', (event) => received.push(event.bytes ?? 0));

const markets = sim.market.activeMarketIds();
const market = markets[0]!;
const feed = sim.market.tokens[0]!.oracleFeedId;

interface Probe {
  name: string;
  path: string;
  body?: unknown;
  viaClient: () => Promise<unknown>;
}
const probes: Probe[] = [
  {
    name: 'GET /clob/orderbook (book, orders)',
    path: `/clob/orderbook?market_id=${market}`,
    viaClient: () => client.orderBook(market),
  },
  {
    name: 'POST /clob/market-prices/batch, 30 ids (price)',
    path: '/clob/market-prices/batch',
    body: { market_ids: markets },
    viaClient: () => client.clobPrices(markets),
  },
  {
    name: 'GET /api/markets/:id (market)',
    path: `/api/markets/${market}`,
    viaClient: () => client.market(market),
  },
  {
    name: 'GET /api/markets/probabilities (probabilities)',
    path: '/api/markets/probabilities',
    viaClient: () => client.probabilities(),
  },
  {
    name: 'GET /api/markets/:id/activity, 100 (trades)',
    path: `/api/markets/${market}/activity?limit=100&offset=0`,
    viaClient: () => client.marketActivity(market, { limit: 100, offset: 0 }),
  },
  {
    name: 'GET /api/markets, 25 a page (markets)',
    path: '/api/markets?limit=100&offset=0&statusFilter=all&sortBy=newest',
    viaClient: () => client.markets({ limit: 100, offset: 0, statusFilter: 'all', sortBy: 'newest' }),
  },
  {
    name: 'GET /api/tokens/price/:feedId (oracle)',
    path: `/api/tokens/price/${feed}`,
    viaClient: () => client.tokenPrice(feed),
  },
];

/** The body as sent for an `Accept-Encoding` (none: the header left out), and its coding. */
function raw(probe: Probe, acceptEncoding?: string): Promise<{ bytes: Buffer; coding: string | undefined }> {
  const headers: Record<string, string> =
    acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding };
  return new Promise((resolve, reject) => {
    const done = (res: import('node:http').IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ bytes: Buffer.concat(chunks), coding: res.headers['content-encoding'] }));
    };
    if (probe.body === undefined) {
      get(`${sim.url}${probe.path}`, { headers }, done).on('error', reject);
      return;
    }
    const text = JSON.stringify(probe.body);
    request(
      `${sim.url}${probe.path}`,
      { method: 'POST', headers: { ...headers, 'content-type': 'application/json' } },
      done,
    )
      .on('error', reject)
      .end(text);
  });
}

function decodeMicros(bytes: Buffer, coding: string | undefined): number {
  const decode = coding === 'br' ? brotliDecompressSync : coding === 'gzip' ? gunzipSync : undefined;
  if (decode === undefined) return 0;
  const rounds = 500;
  const started = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) decode(bytes);
  return Number(process.hrtime.bigint() - started) / 1000 / rounds;
}

const rows: string[] = [];
let before = 0;
let after = 0;
for (const probe of probes) {
  const plain = await raw(probe);
  const gzip = await raw(probe, 'gzip');
  const asked = await raw(probe, 'gzip, br');
  received.length = 0;
  await probe.viaClient();
  const relayBytes = received[0] ?? Number.NaN;
  before += plain.bytes.length;
  after += relayBytes;
  rows.push(
    `| ${probe.name} | ${plain.bytes.length} | ${gzip.bytes.length} | ${relayBytes} (${asked.coding}) | ${(plain.bytes.length / relayBytes).toFixed(1)} x | ${decodeMicros(asked.bytes, asked.coding).toFixed(0)} |`,
  );
}
console.log(
  '| endpoint (channel) | before: no Accept-Encoding, bytes | gzip, bytes | now: gzip, br, bytes read by the client | saving | decode, µs |',
);
console.log('|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
console.log(`| one poll of each | ${before} | | ${after} | ${(before / after).toFixed(1)} x | |`);
await client.close();
await sim.close();
