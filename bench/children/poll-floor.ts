/**
 * @module bench/children/poll-floor
 * The floor a book poll is measured against (issue 10, "poll capacity"): the least any poller can
 * do for one book, a keep-alive undici request for the same simulator order book and a
 * `JSON.parse` of its body, at the rate the relay polled, in a process of its own so its CPU time
 * is measured like the relay's. No validation, no state, no clients: what is left of the relay's
 * CPU per poll above this is the relay's own work.
 *
 * With `acceptEncoding` it asks for the codings the relay asks for and decodes what comes back in
 * one synchronous zlib call (issue 50): against an upstream that compresses, the floor then pays
 * for the same decoding the relay must do, and is not flattered by bodies it never had to inflate.
 */
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
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
  /** The `Accept-Encoding` to send (the relay's `gzip, br`); none: the server's default form. */
  acceptEncoding?: string;
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
/** Bodies that came with a `Content-Encoding`, and their bytes as they came over the wire. */
let encoded = 0;
let wireBytes = 0;
/** Requests' durations from sending to the parsed body, summed (ms). */
let durationMs = 0;

function decoded(body: Buffer, coding: string | undefined): Buffer {
  if (coding === undefined || coding === 'identity') return body;
  encoded += 1;
  if (coding === 'br') return brotliDecompressSync(body);
  if (coding === 'gzip') return gunzipSync(body);
  if (coding === 'deflate') return inflateSync(body);
  throw new Error(`unexpected content-encoding ${coding}`);
}

async function pollOnce(path: string, headers: Record<string, string>): Promise<void> {
  inFlight += 1;
  const startedAt = performance.now();
  try {
    const response = await pool!.request({ method: 'GET', path, headers });
    const raw = Buffer.from(await response.body.arrayBuffer());
    wireBytes += raw.length;
    const coding = response.headers['content-encoding'];
    const text = decoded(raw, typeof coding === 'string' ? coding : undefined).toString('utf8');
    const book = JSON.parse(text) as { bids?: unknown[] };
    if (response.statusCode !== 200 || !Array.isArray(book.bids)) failures += 1;
    bodyBytes += text.length;
    completed += 1;
    durationMs += performance.now() - startedAt;
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
  const headers: Record<string, string> =
    plan.acceptEncoding === undefined ? {} : { 'accept-encoding': plan.acceptEncoding };
  const startedAt = performance.now();
  let started = 0;
  timer = setInterval(() => {
    const owed = Math.floor(((performance.now() - startedAt) * plan.ratePerSecond) / 1000);
    // As the relay: no more in flight than its concurrency; a request owed waits for a free one.
    for (; started < owed && inFlight < plan.connections; started++)
      void pollOnce(paths[started % paths.length]!, headers);
  }, TICK_MS);
}

serveIpc({
  ready: () => ({}),
  start,
  usage: () => sampleUsage(),
  counts: () => ({ completed, failures, bodyBytes, encoded, wireBytes, durationMs }),
  stop: async () => {
    clearInterval(timer);
    await pool?.close();
  },
});
// An orderly exit, so that a --cpu-prof child writes its profile.
process.on('SIGTERM', () => process.exit(0));
