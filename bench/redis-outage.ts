/**
 * @module bench/redis-outage
 * `node --import tsx bench/redis-outage.ts [--outage-s=20]`: Redis stopped under three relays
 * (docs/cluster.md "Redis outages"). One private Redis, the simulator, three relay processes; on
 * each relay one client with 9 streams (3 markets: full book, depth-10 book, price). Redis is
 * stopped for the outage and started again (empty, as a restarted Redis without persistence is);
 * once every relay is back and every stream in one epoch again, it prints per client the epoch
 * changes it saw (snapshots after its first of each stream), those of the books whose lease its
 * relay held when Redis stopped, and the protocol violations (gaps, order).
 */
import { Redis } from 'ioredis';
import { targetKeys } from '../src/relay/coordination/redis/keys.ts';
import { startSimulator } from '../src/sim/server.ts';
import { ProtocolClient } from '../test/support/clients/protocol-client.ts';
import { type ChildRelay, startChildRelay } from '../test/support/cluster/child-relay.ts';
import { startRedis } from '../test/support/cluster/redis-server.ts';
import { waitFor } from '../test/support/wait-for.ts';

const outageArg = process.argv.find((arg) => arg.startsWith('--outage-s='));
const outageMs = Number(outageArg?.split('=')[1] ?? 20) * 1_000;
const RELAYS = 3;

const sim = await startSimulator({ markets: 3, seed: 7, tickMs: 100 });
const markets = sim.market.marketIds();
let redis = await startRedis();
const relays: ChildRelay[] = await Promise.all(
  Array.from({ length: RELAYS }, () =>
    startChildRelay([
      `--upstream=${sim.url}`,
      `--redis=${redis.url}`,
      '--book-poll-ms=250',
      '--price-poll-ms=250',
      '--upstream-rps=100',
    ]),
  ),
);
const clients: ProtocolClient[] = [];
const streamsOf = (client: ProtocolClient) => [
  ...markets.map((market) => client.view('book', market, null)),
  client.view('book', markets[0]!, 10),
  ...markets.map((market) => client.view('price', market, undefined)),
];
const health = async (relay: ChildRelay) =>
  (await (await fetch(`${relay.url}/health`)).json()) as { redis: { connected: boolean; relays: number } };
try {
  for (const relay of relays) {
    const client = await ProtocolClient.connect(relay.url);
    clients.push(client);
    await client.request({ op: 'subscribe', channel: 'book', markets, depth: null });
    await client.request({ op: 'subscribe', channel: 'book', markets: [markets[0]!], depth: 10 });
    await client.request({ op: 'subscribe', channel: 'price', markets });
  }
  await waitFor('every first snapshot', () => clients.every((client) => streamsOf(client).every(Boolean)));
  await waitFor('every relay to know the others', async () =>
    (await Promise.all(relays.map(health))).every((status) => status.redis.relays === RELAYS),
  );
  // Some rebalance periods, for the leases to settle where rendezvous hashing puts them.
  await new Promise((resolve) => setTimeout(resolve, 8_000));
  const instances = await Promise.all(relays.map((relay) => relay.instance()));
  const inspector = new Redis(redis.url);
  const leases = await Promise.all(
    markets.map((market) => inspector.get(targetKeys(`book:${market}`).lease)),
  );
  inspector.disconnect();
  const holders = leases.map((lease) => instances.findIndex((instance) => lease?.startsWith(`${instance} `)));
  const before = clients.map((client) => client.of('snapshot').length);
  const heldBooks = (client: number) =>
    clients[client]!.of('snapshot').filter(
      (message) => message.channel === 'book' && holders[markets.indexOf(String(message.market))] === client,
    ).length;
  const heldBefore = clients.map((_, i) => heldBooks(i));

  const port = redis.port;
  await redis.stop();
  const stoppedAt = Date.now();
  await waitFor('every relay to see Redis gone', async () =>
    (await Promise.all(relays.map(health))).every((status) => !status.redis.connected),
  );
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, outageMs - (Date.now() - stoppedAt))));
  redis = await startRedis(port);
  await waitFor(
    'every relay back on Redis',
    async () => (await Promise.all(relays.map(health))).every((status) => status.redis.connected),
    { timeoutMs: 30_000 },
  );
  await waitFor(
    'one epoch per stream on every relay',
    () =>
      streamsOf(clients[0]!).every(
        (_, s) => new Set(clients.map((client) => streamsOf(client)[s]!.epoch)).size === 1,
      ),
    { timeoutMs: 30_000 },
  );
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  console.log(`Redis stopped for ${outageMs / 1_000} s under ${RELAYS} relays, 9 streams per client`);
  console.log('client | epoch changes | of the books its relay held | violations');
  clients.forEach((client, i) => {
    const changes = client.of('snapshot').length - before[i]!;
    const held = heldBooks(i) - heldBefore[i]!;
    const ownBooks = holders.filter((holder) => holder === i).length;
    console.log(`${i} | ${changes} | ${held} (${ownBooks} books held) | ${client.violations.length}`);
  });
} finally {
  await Promise.all(clients.map((client) => client.close()));
  await Promise.all(relays.map((relay) => relay.stop('SIGKILL')));
  await redis.stop();
  await sim.close();
}
