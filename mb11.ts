import { Pool } from 'undici';
import { startSim } from './bench/lib/servers.ts';
import { killAllChildren } from './bench/lib/ipc.ts';
import { UpstreamClient } from './src/upstream/client.ts';
const sim = await startSim(100, 400);
const markets = sim.markets.slice(0, 300);
const pool = new Pool(sim.url, { connections: 8 });
const client = new UpstreamClient({ baseUrl: sim.url, concurrency: 8, rps: 1e6, connections: 8 });
const which = process.env.KIND;
const fn = which === 'floor'
  ? async (m: string) => JSON.parse(await (await pool.request({ method: 'GET', path: `/clob/orderbook?market_id=${m}` })).body.text())
  : (m: string) => client.orderBook(m);
let i = 0; const n = 15000;
await Promise.all(Array.from({ length: 8 }, async () => { while (i < n) await fn(markets[i++ % markets.length]!); }));
await pool.close(); await client.close(); await sim.child.stop(); killAllChildren();
