import { Pool } from 'undici';
import { startSim } from './bench/lib/servers.ts';
import { killAllChildren } from './bench/lib/ipc.ts';
import { UpstreamClient, ResponseMemo } from './src/upstream/client.ts';
import { aggregateBook } from './src/relay/aggregate.ts';
const sim = await startSim(100, 400);
const markets = sim.markets.slice(0, 300);
const pool = new Pool(sim.url, { connections: 8 });
const client = new UpstreamClient({ baseUrl: sim.url, concurrency: 8, rps: 1e6, connections: 8 });
const memos = new Map(markets.map((m) => [m, new ResponseMemo<any>()]));
const kinds: Record<string, (m: string) => Promise<unknown>> = {
  floor: async (m) => JSON.parse(await (await pool.request({ method: 'GET', path: `/clob/orderbook?market_id=${m}` })).body.text()),
  client: (m) => client.orderBook(m),
  clientAgg: async (m) => aggregateBook(await client.orderBook(m)),
};
async function run(fn: (m: string) => Promise<unknown>, n: number): Promise<number> {
  let i = 0;
  const c0 = process.cpuUsage();
  await Promise.all(Array.from({ length: 8 }, async () => { while (i < n) await fn(markets[i++ % markets.length]!); }));
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / n;
}
const res: Record<string, number[]> = {};
for (let r = 0; r < 4; r++) for (const [k, fn] of Object.entries(kinds)) (res[k] ??= []).push(await run(fn, 3000));
for (const [k, v] of Object.entries(res)) console.log(k.padEnd(10), v.map((x) => x.toFixed(0)).join(' '), 'min', Math.min(...v).toFixed(0));
await pool.close(); await client.close(); await sim.child.stop(); killAllChildren();
