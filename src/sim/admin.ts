/**
 * @module sim/admin
 * The simulator's admin API under the reserved prefix `/_sim/` of its own port (docs/upstream.md
 * "Operating the simulator"): read and set every fault knob and the market activity at run time,
 * read or clear the request log. Admin requests skip fault injection and the request log, so an
 * outage being rehearsed never blocks the way out of it. No authentication: the simulator is a
 * test tool and listens on 127.0.0.1 unless told otherwise.
 */
import { z } from 'zod';
import { SimHttpError, type SimRequest, type SimResponse } from './api/http.ts';
import type { InjectedFault, SimulatorFaults } from './faults.ts';
import type { MarketSimulation } from './market-simulation.ts';

export const ADMIN_PREFIX = '/_sim/';

export interface SimRequestLogEntry {
  method: string;
  path: string;
  query: Record<string, string>;
  body?: unknown;
  status: number;
  /** The fault injected into this answer, if any. */
  fault?: InjectedFault;
  /** The W3C trace context the request carried (a traced relay's poll), if any. */
  traceparent?: string;
  at: number;
}

/** What the admin API reads and changes; the simulator server implements it. */
export interface SimControl {
  readonly market: MarketSimulation;
  readonly requests: readonly SimRequestLogEntry[];
  faults(): SimulatorFaults;
  setFaults(faults: Partial<SimulatorFaults>): void;
  tickMs(): number;
  setTickMs(tickMs: number): void;
  tick(): void;
  clearRequests(): void;
}

const rate = z.number().min(0).max(1);
const faultsBody = z
  .object({
    latencyMs: z.number().int().min(0).max(600_000),
    errorRate: rate,
    rateLimitRate: rate,
    malformedRate: rate,
  })
  .partial()
  .strict();
const activityBody = z
  .object({
    /** Market evolution interval; 0 = markets stand still until `POST /_sim/tick`. */
    tickMs: z.number().int().min(0).max(86_400_000),
    /** false freezes every book (no trades, no status changes). */
    booksChanging: z.boolean(),
  })
  .partial()
  .strict();
const marketBody = z
  .object({
    /** false freezes this market's book (no trades, no status changes). */
    changing: z.boolean(),
    /** Moves the market on in its lifecycle now. */
    status: z.enum(['EXPIRED', 'RESOLVED']),
  })
  .partial()
  .strict();
const lifecycleBody = z
  .object({
    expireEveryMs: z.number().int().min(0).max(86_400_000),
    resolutionDelayMs: z.number().int().min(0).max(86_400_000),
  })
  .partial()
  .strict();
const requestsQuery = z.object({ limit: z.coerce.number().int().min(1).max(10_000).default(100) });

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
  throw new SimHttpError(400, `invalid ${what}: ${where}${issue?.message ?? 'invalid value'}`);
}

function activity(control: SimControl) {
  return { tickMs: control.tickMs(), booksChanging: control.market.areBooksChanging() };
}

/** Answers a request under ADMIN_PREFIX. */
export function answerAdmin(control: SimControl, request: SimRequest): SimResponse {
  try {
    return route(control, request);
  } catch (error) {
    if (error instanceof SimHttpError) return { status: error.status, body: { error: error.message } };
    throw error;
  }
}

function route(control: SimControl, request: SimRequest): SimResponse {
  const { method, path } = request;
  const resource = path.slice(ADMIN_PREFIX.length);
  if (request.bodyError !== undefined) throw new SimHttpError(400, `invalid JSON body: ${request.bodyError}`);
  if (resource === '' && method === 'GET') {
    return {
      status: 200,
      body: {
        faults: control.faults(),
        activity: activity(control),
        requestsLogged: control.requests.length,
      },
    };
  }
  if (resource === 'faults') {
    if (method === 'PUT') control.setFaults(parse(faultsBody, request.body, 'faults'));
    else if (method !== 'GET') throw notAllowed(method, path);
    return { status: 200, body: control.faults() };
  }
  if (resource === 'activity') {
    if (method === 'PUT') {
      const change = parse(activityBody, request.body, 'activity');
      if (change.tickMs !== undefined) control.setTickMs(change.tickMs);
      if (change.booksChanging !== undefined) control.market.setBookChanging(change.booksChanging);
    } else if (method !== 'GET') throw notAllowed(method, path);
    return { status: 200, body: activity(control) };
  }
  if (resource === 'lifecycle') {
    if (method === 'PUT') control.market.setLifecycle(parse(lifecycleBody, request.body, 'lifecycle'));
    else if (method !== 'GET') throw notAllowed(method, path);
    return { status: 200, body: control.market.lifecycle() };
  }
  if (resource === 'tick' && method === 'POST') {
    control.tick();
    return { status: 200, body: activity(control) };
  }
  if (resource === 'requests') {
    if (method === 'DELETE') {
      control.clearRequests();
      return { status: 200, body: { requests: [] } };
    }
    if (method !== 'GET') throw notAllowed(method, path);
    const { limit } = parse(requestsQuery, request.query, 'query');
    return {
      status: 200,
      body: { total: control.requests.length, requests: control.requests.slice(-limit) },
    };
  }
  if (resource === 'markets' && method === 'POST') {
    const market = control.market.addMarket();
    return { status: 201, body: { id: market.id, status: market.status, expiresAt: market.expiresAt } };
  }
  const market = /^markets\/([^/]+)$/.exec(resource)?.[1];
  if (market !== undefined) return answerMarket(control, request, market);
  throw new SimHttpError(404, `no admin endpoint ${method} ${path}`);
}

function answerMarket(control: SimControl, request: SimRequest, id: string): SimResponse {
  const market = control.market.market(id);
  if (market === undefined) throw new SimHttpError(404, `no market ${id}`);
  if (request.method === 'PUT') {
    const { changing, status } = parse(marketBody, request.body, 'market');
    if (changing !== undefined) control.market.setBookChanging(changing, id);
    if (status !== undefined) control.market.settle(id, status);
  } else if (request.method === 'DELETE') {
    control.market.removeMarket(id);
    return { status: 200, body: { id, removed: true } };
  } else if (request.method !== 'GET') throw notAllowed(request.method, request.path);
  return {
    status: 200,
    body: { id: market.id, status: market.status, changing: market.changing, expiresAt: market.expiresAt },
  };
}

function notAllowed(method: string, path: string): SimHttpError {
  return new SimHttpError(405, `${method} is not allowed on ${path}`);
}
