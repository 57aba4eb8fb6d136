/**
 * @module sim/server
 * The upstream simulator as an HTTP server (node:http, keep-alive on, logs nothing): the whole
 * public interface of the upstream (docs/upstream.md) over a live MarketSimulation, with fault
 * knobs, a request log, its own `GET /metrics` and an admin API under `/_sim/` to change the knobs
 * and the market activity at run time; where the interface leaves an answer open, its profile
 * chooses (sim/profile.ts). `market-relay sim` and `npm start` run it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { ADMIN_PREFIX, answerAdmin, type SimControl, type SimRequestLogEntry } from './admin.ts';
import { catalogRoutes } from './api/catalog.ts';
import { clobRoutes } from './api/clob.ts';
import { refusal, type SimRequest, type SimResponse } from './api/http.ts';
import { marketDataRoutes } from './api/market-data.ts';
import { marketRoutes } from './api/markets.ts';
import { rewardRoutes } from './api/rewards.ts';
import { createRouter } from './api/router.ts';
import { userRoutes } from './api/users.ts';
import { FaultInjector, type SimulatorFaults } from './faults.ts';
import { MarketSimulation, type MarketSimulationOptions } from './market-simulation.ts';
import { createSimMetrics } from './metrics.ts';
import {
  errorBodyOf,
  retryAfterValue,
  type SimulatorProfile,
  type SimulatorProfileName,
  simulatorProfiles,
} from './profile.ts';
import { delivery, writtenForm } from './wire-form.ts';

export type { SimRequestLogEntry } from './admin.ts';
export type { SimulatorFaults } from './faults.ts';
export { MarketSimulation } from './market-simulation.ts';
export type { SimulatorProfileName } from './profile.ts';

export interface SimulatorOptions {
  /** Default 50. */
  markets?: number;
  /** Default 1. */
  seed?: number;
  /** Market evolution interval; default 250; 0 = manual ticks only (tests call tick()). */
  tickMs?: number;
  /** Clock in ms, default Date.now. */
  now?: () => number;
  /** Per-market change rates and a change listener (src/sim/market-simulation.ts). */
  activity?: MarketSimulationOptions['activity'];
  onChange?: MarketSimulationOptions['onChange'];
  /** Trades printed beside the books' fills, by market index (src/sim/trade-flow.ts). */
  tradeFlow?: MarketSimulationOptions['tradeFlow'];
  /** Lifecycle pace (expiries brought forward, resolution delay); also `PUT /_sim/lifecycle`. */
  lifecycle?: MarketSimulationOptions['lifecycle'];
  faults?: Partial<SimulatorFaults>;
  /** The answers to what the upstream interface leaves open (sim/profile.ts); default `default`. */
  profile?: SimulatorProfileName;
  /**
   * The profile's answers compressed otherwise, every other choice kept: what the poll-capacity
   * benchmark needs to weigh compression alone.
   */
  compression?: SimulatorProfile['compression'];
  /** Default 0 (a free port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /**
   * Entries kept in `requests` (default 100,000): beyond it the oldest are dropped, so a long
   * `npm start` demo does not grow without bound. Tests stay far below it.
   */
  requestLogLimit?: number;
}

export interface SimulatorHandle {
  /** e.g. http://127.0.0.1:41234 (no trailing slash). */
  url: string;
  /** The profile it answers with. */
  profile: SimulatorProfileName;
  market: MarketSimulation;
  /** Every request served, in order (the most recent `requestLogLimit` of them). */
  requests: SimRequestLogEntry[];
  clearRequests(): void;
  setFaults(faults: Partial<SimulatorFaults>): void;
  /** Changes the market evolution interval (0 = manual ticks only). */
  setTickMs(tickMs: number): void;
  /** Advances every market one step now. */
  tick(): void;
  close(): Promise<void>;
}

/** Request bodies larger than this are refused (413): the batch bodies are a few kilobytes. */
const MAX_BODY_BYTES = 1024 * 1024;

export async function startSimulator(options: SimulatorOptions = {}): Promise<SimulatorHandle> {
  const tickMs = options.tickMs ?? 250;
  if (!Number.isFinite(tickMs) || tickMs < 0) throw new RangeError('tickMs must be >= 0');
  const seed = options.seed ?? 1;
  const now = options.now ?? Date.now;
  const market = new MarketSimulation({
    markets: options.markets ?? 50,
    seed,
    now,
    ...(options.activity === undefined ? {} : { activity: options.activity }),
    ...(options.onChange === undefined ? {} : { onChange: options.onChange }),
    ...(options.tradeFlow === undefined ? {} : { tradeFlow: options.tradeFlow }),
    ...(options.lifecycle === undefined ? {} : { lifecycle: options.lifecycle }),
  });
  const faults = new FaultInjector(seed, options.faults);
  const profileName = options.profile ?? 'default';
  const profile: SimulatorProfile = {
    ...simulatorProfiles[profileName],
    ...(options.compression === undefined ? {} : { compression: options.compression }),
  };
  const route = createRouter(
    [
      ...catalogRoutes(market, profile),
      ...clobRoutes(market, profile),
      ...marketRoutes(market, profile),
      ...marketDataRoutes(market),
      ...userRoutes(market),
      ...rewardRoutes(market),
    ],
    profile,
  );
  const requests: SimRequestLogEntry[] = [];
  const requestLogLimit = options.requestLogLimit ?? 100_000;

  let tickMsNow = tickMs;
  let timer: NodeJS.Timeout | undefined;
  const control: SimControl = {
    market,
    requests,
    faults: () => faults.current,
    setFaults: (next) => faults.set(next),
    tickMs: () => tickMsNow,
    setTickMs: (next) => {
      if (!Number.isFinite(next) || next < 0) throw new RangeError('tickMs must be >= 0');
      tickMsNow = next;
      clearInterval(timer);
      timer = next > 0 ? setInterval(() => control.tick(), next) : undefined;
      timer?.unref();
    },
    tick: () => {
      market.tick();
      metrics.ticked();
    },
    clearRequests: () => {
      requests.length = 0;
    },
  };
  const metrics = createSimMetrics(control);

  const serve = async (incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> => {
    const at = now();
    const url = new URL(incoming.url ?? '/', 'http://simulator');
    const request = await readRequest(incoming, url);
    // The operator's endpoints: no faults, no latency, not in the request log.
    if (request.path === '/metrics' && request.method === 'GET') {
      const text = await metrics.registry.metrics();
      return send(outgoing, { status: 200, text, type: metrics.registry.contentType });
    }
    if (request.path.startsWith(ADMIN_PREFIX) || `${request.path}/` === ADMIN_PREFIX) {
      const response = answerAdmin(control, request);
      return send(outgoing, { status: response.status, text: JSON.stringify(response.body) });
    }
    if (profile.redirect) {
      requests.push({ method: request.method, path: request.path, query: request.query, status: 301, at });
      const location = `https://${incoming.headers.host ?? 'simulator'}${incoming.url ?? '/'}`;
      return send(outgoing, { status: 301, text: '', headers: { location } });
    }
    const latencyMs = profile.latencyMs + faults.current.latencyMs;
    if (latencyMs > 0) await delay(latencyMs);
    const fault = faults.draw();
    const response = answer(request, fault);
    const body = response.error === undefined ? response.body : errorBodyOf(profile, response.error);
    let text = JSON.stringify(writtenForm(profile, body));
    if (fault === 'malformed') text = faults.corrupt(body, text);
    const entry: SimRequestLogEntry = {
      method: request.method,
      path: request.path,
      query: request.query,
      status: response.status,
      at,
    };
    if (request.body !== undefined) entry.body = request.body;
    if (fault !== undefined) entry.fault = fault;
    const traceparent = request.headers.traceparent;
    if (traceparent !== undefined) entry.traceparent = traceparent;
    requests.push(entry);
    metrics.served(response.route, response.status, fault);
    // Trimmed in batches (a tenth over the limit) so dropping the oldest stays cheap.
    if (requests.length > requestLogLimit * 1.1) requests.splice(0, requests.length - requestLogLimit);
    const delivered = delivery(profile, text, request.headers['accept-encoding']);
    send(outgoing, {
      status: response.status,
      text: delivered.body,
      headers: { ...response.headers, ...delivered.headers },
    });
  };

  const answer = (request: SimRequest, fault: ReturnType<FaultInjector['draw']>): SimResponse => {
    if (fault === 'error') return refusal(500, 'internal server error (injected fault)');
    if (fault === 'rate-limit') {
      return refusal(429, 'too many requests (injected fault)', {
        'retry-after': retryAfterValue(profile, now()),
      });
    }
    if (request.bodyError === TOO_LARGE) return refusal(413, 'request body too large');
    return route(request);
  };

  const server = createServer({ keepAlive: true }, (incoming, outgoing) => {
    serve(incoming, outgoing).catch((error: unknown) => {
      if (!outgoing.headersSent && !outgoing.destroyed) {
        outgoing.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
        const message = error instanceof Error ? error.message : String(error);
        outgoing.end(JSON.stringify(errorBodyOf(profile, message)));
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  control.setTickMs(tickMs);

  return {
    url: `http://${host}:${address.port}`,
    profile: profileName,
    market,
    requests,
    clearRequests: () => {
      requests.length = 0;
    },
    setFaults: control.setFaults,
    setTickMs: control.setTickMs,
    tick: control.tick,
    close: async () => {
      clearInterval(timer);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

const TOO_LARGE = 'too large';

function send(
  outgoing: ServerResponse,
  answer: {
    status: number;
    text: string | Buffer;
    type?: string;
    headers?: Record<string, string> | undefined;
  },
): void {
  if (outgoing.destroyed) return;
  outgoing.writeHead(answer.status, {
    'content-type': answer.type ?? 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(answer.text),
    ...answer.headers,
  });
  outgoing.end(answer.text);
}

async function readRequest(incoming: IncomingMessage, url: URL): Promise<SimRequest> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of incoming as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) tooLarge = true;
    else chunks.push(chunk);
  }
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(incoming.headers)) {
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const request: SimRequest = {
    method: incoming.method ?? 'GET',
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers,
    body: undefined,
  };
  if (tooLarge) {
    request.bodyError = TOO_LARGE;
    return request;
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return request;
  try {
    request.body = JSON.parse(text);
  } catch (error) {
    request.body = text;
    request.bodyError = error instanceof Error ? error.message : 'invalid JSON';
  }
  return request;
}
