/**
 * @module sim/api/http
 * The simulator's transport-free request/response shapes, its HTTP error, and the parsing of query
 * parameters shared by every endpoint (docs/upstream.md): `limit`/`offset` in
 * string or integer form, enumerations, booleans, pagination.
 */
import { isMarketId } from '../../../packages/protocol/src/protocol/limits.ts';
import type { SimMarket } from '../market.ts';
import type { MarketSimulation } from '../market-simulation.ts';

export interface SimRequest {
  method: string;
  path: string;
  /** Last value wins for a repeated parameter. */
  query: Record<string, string>;
  headers: Record<string, string | undefined>;
  /** Parsed JSON body; undefined when there was none. */
  body: unknown;
  /** Set when a body was sent but is not JSON. */
  bodyError?: string;
}

export interface SimResponse {
  status: number;
  /** The answer's JSON (undefined for a refusal). */
  body: unknown;
  /** Set on a refusal: the body is rendered in the profile's error shape (sim/profile.ts). */
  error?: string;
  headers?: Record<string, string>;
  /** The endpoint's path pattern (`/api/markets/:id`) when one matched: the metrics label. */
  route?: string;
}

/**
 * What a refused request is about when the interface leaves its status open: an id that names
 * nothing, or one of the wrong form. The router answers these with the profile's status.
 */
export type RefusedId = 'unknown-id' | 'malformed-id';

/** Any refusal of a request; the server answers it with this status, in the profile's error body. */
export class SimHttpError extends Error {
  override name = 'SimHttpError';
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly refusedId: RefusedId | undefined;

  constructor(
    status: number,
    message: string,
    options: { headers?: Record<string, string>; refusedId?: RefusedId } = {},
  ) {
    super(message);
    this.status = status;
    this.headers = options.headers ?? {};
    this.refusedId = options.refusedId;
  }
}

/** A refusal answered in the profile's error body. */
export function refusal(status: number, message: string, headers?: Record<string, string>): SimResponse {
  return { status, body: undefined, error: message, ...(headers === undefined ? {} : { headers }) };
}

export function ok(body: unknown): SimResponse {
  return { status: 200, body };
}

export function badRequest(message: string): SimHttpError {
  return new SimHttpError(400, message);
}

export function notFound(message: string): SimHttpError {
  return new SimHttpError(404, message);
}

/** An id that names nothing: 404, or the profile's status on `/api/...`. */
export function unknownId(message: string): SimHttpError {
  return new SimHttpError(404, message, { refusedId: 'unknown-id' });
}

/** An id of the wrong form: 400, or the profile's status on `/api/...`. */
export function malformedId(message: string): SimHttpError {
  return new SimHttpError(400, message, { refusedId: 'malformed-id' });
}

/** The live market `id` names: refused as malformed when `id` (the request's `field`) is not a UUID, unknown when no market has it. */
export function requireMarket(sim: MarketSimulation, id: string, field: string): SimMarket {
  if (!isMarketId(id)) throw malformedId(`${field} must be a UUID`);
  const market = sim.market(id);
  if (!market) throw unknownId(`market ${id} not found`);
  return market;
}

const NON_NEGATIVE_INTEGER = /^\d{1,9}$/;

/**
 * A positive count such as `limit` or `days`, in string or integer form (a query string carries
 * both as text). Missing: the default. Above the cap: the cap (a page's `pagination.limit` says so).
 */
export function parseCount(
  query: Record<string, string>,
  name: string,
  defaults: { default: number; max: number },
): number {
  const raw = query[name];
  if (raw === undefined || raw === '') return defaults.default;
  if (!NON_NEGATIVE_INTEGER.test(raw) || Number(raw) < 1)
    throw badRequest(`${name} must be a positive integer`);
  return Math.min(Number(raw), defaults.max);
}

export function parseLimit(
  query: Record<string, string>,
  defaults: { default: number; max: number },
): number {
  return parseCount(query, 'limit', defaults);
}

/** `offset`: a non-negative integer, default 0 (docs/upstream.md). */
export function parseOffset(query: Record<string, string>): number {
  const raw = query.offset;
  if (raw === undefined || raw === '') return 0;
  if (!NON_NEGATIVE_INTEGER.test(raw)) throw badRequest('offset must be a non-negative integer');
  return Number(raw);
}

export function parseEnum<T extends string>(
  query: Record<string, string>,
  name: string,
  values: readonly T[],
  fallback: T,
): T {
  const raw = query[name];
  if (raw === undefined || raw === '') return fallback;
  const found = values.find((value) => value === raw);
  if (found === undefined) throw badRequest(`${name} must be one of ${values.join(', ')}`);
  return found;
}

/** A boolean in string form (`include_closed`): true/false/1/0, default false. */
export function parseBoolean(query: Record<string, string>, name: string): boolean {
  const raw = query[name];
  if (raw === undefined || raw === '') return false;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw badRequest(`${name} must be true or false`);
}

export interface Page<T> {
  items: T[];
  pagination: { total: number; limit: number; offset: number; hasMore: boolean };
}

/** One page of `all` as the query's `limit` and `offset` ask for (both validated). */
export function pageOf<T>(
  query: Record<string, string>,
  all: readonly T[],
  limits: { default: number; max: number },
): Page<T> {
  return paginate(all, parseLimit(query, limits), parseOffset(query));
}

export function paginate<T>(all: readonly T[], limit: number, offset: number): Page<T> {
  const items = all.slice(offset, offset + limit);
  return {
    items,
    pagination: { total: all.length, limit, offset, hasMore: offset + items.length < all.length },
  };
}

/**
 * The `{market_ids: [...]}` body of both batch endpoints: a JSON object whose list is non-empty,
 * at most `max` long, of UUID strings (docs/upstream.md). Duplicates are answered once, in first order.
 */
export function parseMarketIdsBody(request: SimRequest, max: number): string[] {
  if (request.bodyError !== undefined) throw badRequest(`body is not valid JSON: ${request.bodyError}`);
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequest('body must be a JSON object {"market_ids": [...]}');
  }
  const ids: unknown = (body as { market_ids?: unknown }).market_ids;
  if (!Array.isArray(ids)) throw badRequest('market_ids must be an array of UUID strings');
  if (ids.length === 0) throw badRequest('market_ids must not be empty');
  if (ids.length > max) throw badRequest(`market_ids must have at most ${max} items`);
  const seen = new Set<string>();
  ids.forEach((id, index) => {
    if (typeof id !== 'string' || !isMarketId(id)) throw badRequest(`market_ids[${index}] is not a UUID`);
    seen.add(id.toLowerCase());
  });
  return [...seen];
}
