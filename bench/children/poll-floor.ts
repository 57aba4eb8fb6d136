/**
 * @module bench/children/poll-floor
 * The floor a book poll is measured against (issue 10, "poll capacity"): the least any poller can
 * do for one book, a keep-alive undici request for the same simulator order book and a
 * `JSON.parse` of its body, at the rate the relay polled, in a process of its own so its CPU time
 * is measured like the relay's. No validation, no state, no clients: what is left of the relay's
 * CPU per poll above this is the relay's own work.
 */
import { Pool } from 'undici';
import { serveIpc } from '../lib/ipc.ts';
import { sampleUsage } from '../lib/usage.ts';

interface FloorPlan {
  /** The simulator's origin. */
  url: string;
  markets: string[];
  ratePerSecond: number;
  /** Pool connections, and requests in flight at most (the relay's `--upstream-concurrency`). */
  connections: number;
}

/** Requests are started on a timer this often, as many as the rate owes by then. */
const TICK_MS = 5;

let pool: Pool | undefined;
let timer: NodeJS.Timeout | undefined;
let inFlight = 0;
let completed = 0;
let failures = 0;
/** Parsed bodies' lengths, summed: keeps JSON.parse's result alive and shows the body size. */
let bodyBytes = 0;

async function pollOnce(path: string): Promise<void> {
  inFlight += 1;
  try {
    const response = await pool!.request({ method: 'GET', path });
    const text = await response.body.text();
    const book = JSON.parse(text) as { bids?: unknown[] };
    if (response.statusCode !== 200 || !Array.isArray(book.bids)) failures += 1;
    bodyBytes += text.length;
    completed += 1;
  } catch {
    failures += 1;
  } finally {
    inFlight -= 1;
  }
}

function start(payload: unknown): void {
  const plan = payload as FloorPlan;
  pool = new Pool(plan.url, { connections: plan.connections });
  const paths = plan.markets.map((market) => `/clob/orderbook?market_id=${market}`);
  const startedAt = performance.now();
  let started = 0;
  timer = setInterval(() => {
    const owed = Math.floor(((performance.now() - startedAt) * plan.ratePerSecond) / 1000);
    // As the relay: no more in flight than its concurrency; a request owed waits for a free one.
    for (; started < owed && inFlight < plan.connections; started++)
      void pollOnce(paths[started % paths.length]!);
  }, TICK_MS);
}

serveIpc({
  ready: () => ({}),
  start,
  usage: () => sampleUsage(),
  counts: () => ({ completed, failures, bodyBytes }),
  stop: async () => {
    clearInterval(timer);
    await pool?.close();
  },
});
// An orderly exit, so that a --cpu-prof child writes its profile.
process.on('SIGTERM', () => process.exit(0));
