/**
 * @module protocol/rest-paths
 * The `rest` channel's stream ids (docs/protocol.md "`rest` data"): upstream's public GET paths,
 * each in one canonical spelling so that equivalent subscriptions share one stream and one poll.
 * The table below is upstream's public GETs (docs/upstream.md) with what each parameter may be;
 * test/protocol/rest-paths.test.ts keeps it in step with the upstream client's endpoint table.
 * Pure and importing only the channel registry (the GETs a channel carries whole are declared in
 * its folder), so the relay and the SDK spell paths the same way.
 *
 * Canonical spelling: path parameters that are ids in lower case (UUIDs, hex) or without leading
 * zeros (integers); query parameters sorted by name, each once, with values in one spelling
 * (integers in decimal, enums in upstream's case, booleans `true`/`false`), and a parameter equal
 * to upstream's documented default left out. Values upstream leaves open (a username, search text,
 * a date) are kept as sent.
 */

import { channelGets } from '../channels/registry.ts';

/** The longest path a `rest` subscription may name. */
export const MAX_REST_PATH_LENGTH = 512;

type Value =
  | { kind: 'uuid' }
  /** A market UUID or its exchange address (`0x` and hex). */
  | { kind: 'uuid-or-hex' }
  | { kind: 'hex' }
  | { kind: 'int'; min: number; max?: number; default?: number }
  | { kind: 'enum'; values: readonly string[]; caseless?: boolean }
  | { kind: 'bool' }
  | { kind: 'text' };

interface RestRoute {
  /** Upstream's template: `:name` segments are path parameters. */
  template: string;
  params?: Readonly<Record<string, Value>>;
  query?: Readonly<Record<string, Value>>;
  /** Query parameters upstream requires. */
  required?: readonly string[];
}

const uuid: Value = { kind: 'uuid' };
const text: Value = { kind: 'text' };
const bool: Value = { kind: 'bool' };
const offset: Value = { kind: 'int', min: 0, default: 0 };
const limit = (fallback: number, max?: number): Value => ({
  kind: 'int',
  min: 1,
  default: fallback,
  ...(max === undefined ? {} : { max }),
});
const oneOf = (values: readonly string[], caseless = false): Value => ({ kind: 'enum', values, caseless });

/** Upstream's public GETs (its `/health` is the relay's own and is left out). */
export const restRoutes: readonly RestRoute[] = [
  { template: '/clob/orderbook', query: { market_id: uuid }, required: ['market_id'] },
  {
    template: '/api/markets',
    query: {
      limit: limit(20),
      offset,
      sortBy: oneOf(['volume', 'newest', 'ending_soon']),
      statusFilter: oneOf(['all', 'active', 'expired', 'resolved']),
      timeFilter: oneOf(['all', '24h', '4h', '1h', '30m', '15m', '5m', 'week', 'month']),
      tokenId: { kind: 'int', min: 0 },
    },
  },
  // Before `:id` below, which would read such a path's last segment as an id.
  ...channelGets.map((template) => ({ template })),
  { template: '/api/markets/:id', params: { id: { kind: 'uuid-or-hex' } } },
  {
    template: '/api/markets/:id/history',
    params: { id: uuid },
    query: { interval: oneOf(['1h', '24h', '7d', '30d', 'all']) },
  },
  {
    template: '/api/markets/:id/holders',
    params: { id: uuid },
    query: { type: oneOf(['YES', 'NO'], true), limit: limit(20), offset },
    required: ['type'],
  },
  { template: '/api/markets/:id/comments', params: { id: uuid }, query: { limit: limit(20, 50), offset } },
  { template: '/api/markets/:id/activity', params: { id: uuid }, query: { limit: limit(20, 100), offset } },
  { template: '/api/search', query: { q: text } },
  { template: '/api/tokens', query: { query: text } },
  { template: '/api/tokens/price/:feedId', params: { feedId: { kind: 'hex' } } },
  { template: '/api/tokens/:id', params: { id: { kind: 'int', min: 0 } } },
  { template: '/api/users/:username', params: { username: text } },
  { template: '/api/users/:username/profile', params: { username: text }, query: { include_closed: bool } },
  { template: '/api/users/:username/stats', params: { username: text } },
  { template: '/api/users/:username/positions', params: { username: text }, query: { include_closed: bool } },
  { template: '/api/users/:username/activity', params: { username: text } },
  {
    template: '/api/users/:username/net-worth-history',
    params: { username: text },
    query: { days: { kind: 'int', min: 1, max: 365, default: 30 } },
  },
  { template: '/api/rewards/program' },
  { template: '/api/rewards/leaderboard', query: { limit: limit(25), from: text, to: text } },
  {
    template: '/api/rewards/epochs',
    query: { limit: limit(30), status: oneOf(['OPEN', 'FINALIZED', 'PAID'], true) },
  },
  { template: '/api/market-data/:marketId', params: { marketId: uuid } },
];

/** A path a client may subscribe, as upstream is asked for it. */
export interface CanonicalRestPath {
  /** The canonical path with its query: the stream id. */
  path: string;
  /** The route template it matched (upstream's spelling, e.g. `/api/users/:username/positions`). */
  template: string;
  /** The path part alone and the query's parameters, as upstream is asked. */
  pathname: string;
  query: Record<string, string>;
}

export type RestPathResult =
  | { ok: true; value: CanonicalRestPath }
  /** `path_not_public`: not one of upstream's public GETs; `bad_request`: a parameter is wrong. */
  | { ok: false; code: 'path_not_public' | 'bad_request'; message: string };

const NOT_PUBLIC =
  'not a public GET path of upstream (private, unknown or not a GET; docs/protocol.md "`rest` data")';

/** A UTF-16 surrogate standing alone: in a `u` pattern a whole pair reads as one code point past it. */
const HALF_PAIR = /\p{Surrogate}/u;

/** The canonical form of `path` (a path with an optional query string), or why it is refused. */
export function canonicalRestPath(path: string): RestPathResult {
  if (path.length > MAX_REST_PATH_LENGTH)
    return { ok: false, code: 'bad_request', message: `longer than ${MAX_REST_PATH_LENGTH} characters` };
  // Half a surrogate pair (a JSON escape can spell one) has no UTF-8 form: percent-encoding it throws.
  if (HALF_PAIR.test(path))
    return { ok: false, code: 'bad_request', message: 'not well-formed Unicode (half a surrogate pair)' };
  const queryAt = path.indexOf('?');
  const pathname = queryAt === -1 ? path : path.slice(0, queryAt);
  const search = queryAt === -1 ? '' : path.slice(queryAt + 1);
  if (!pathname.startsWith('/') || pathname.includes('#'))
    return { ok: false, code: 'bad_request', message: 'a path starts with "/" and has no fragment' };
  const segments = pathname.split('/').slice(1);
  let decoded: string[];
  try {
    decoded = segments.map((segment) => decodeURIComponent(segment));
  } catch {
    return { ok: false, code: 'bad_request', message: 'a path segment is not valid percent-encoding' };
  }
  for (const route of restRoutes) {
    const params = matchTemplate(route.template, decoded);
    if (params === undefined) continue;
    return canonicalOf(route, params, search);
  }
  return { ok: false, code: 'path_not_public', message: NOT_PUBLIC };
}

/** The template's parameters in `segments`, or undefined when the template does not match. */
function matchTemplate(template: string, segments: readonly string[]): Record<string, string> | undefined {
  const parts = template.split('/').slice(1);
  if (parts.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, part] of parts.entries()) {
    const segment = segments[i] ?? '';
    if (part.startsWith(':')) {
      if (segment === '') return undefined;
      params[part.slice(1)] = segment;
    } else if (part !== segment) return undefined;
  }
  return params;
}

function canonicalOf(route: RestRoute, params: Record<string, string>, search: string): RestPathResult {
  const segments: string[] = [];
  for (const part of route.template.split('/').slice(1)) {
    if (!part.startsWith(':')) {
      segments.push(part);
      continue;
    }
    const name = part.slice(1);
    const value = spell(route.params?.[name] ?? text, params[name] ?? '');
    if (value === undefined) return badValue(name, route.params?.[name] ?? text);
    segments.push(encodeURIComponent(value));
  }
  const query: Record<string, string> = {};
  let entries: Array<[string, string]>;
  try {
    entries = search === '' ? [] : search.split('&').map(queryEntry);
  } catch {
    return { ok: false, code: 'bad_request', message: 'the query is not valid percent-encoding' };
  }
  for (const [name, raw] of entries) {
    const kind = route.query?.[name];
    if (kind === undefined)
      return {
        ok: false,
        code: 'bad_request',
        message: `${route.template} takes no query parameter "${name}"`,
      };
    if (Object.hasOwn(query, name))
      return { ok: false, code: 'bad_request', message: `query parameter "${name}" given twice` };
    const value = spell(kind, raw);
    if (value === undefined) return badValue(name, kind);
    query[name] = value;
  }
  for (const name of route.required ?? [])
    if (!Object.hasOwn(query, name))
      return {
        ok: false,
        code: 'bad_request',
        message: `${route.template} requires query parameter "${name}"`,
      };
  for (const [name, value] of Object.entries(query)) {
    const kind = route.query?.[name];
    if (kind?.kind === 'int' && kind.default !== undefined && value === String(kind.default))
      delete query[name];
  }
  const pathname = `/${segments.join('/')}`;
  const names = Object.keys(query).sort();
  const queryText = names.map((name) => `${name}=${encodeURIComponent(query[name] ?? '')}`).join('&');
  const sorted = Object.fromEntries(names.map((name) => [name, query[name] ?? '']));
  return {
    ok: true,
    value: {
      path: queryText === '' ? pathname : `${pathname}?${queryText}`,
      template: route.template,
      pathname,
      query: sorted,
    },
  };
}

function queryEntry(pair: string): [string, string] {
  const at = pair.indexOf('=');
  const decode = (part: string) => decodeURIComponent(part.replaceAll('+', ' '));
  return at === -1 ? [decode(pair), ''] : [decode(pair.slice(0, at)), decode(pair.slice(at + 1))];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HEX = /^0x[0-9a-f]{1,128}$/;
const DIGITS = /^\d{1,15}$/;

/** The one spelling of `raw` as a value of `kind`, or undefined when it is not one. */
function spell(kind: Value, raw: string): string | undefined {
  const lower = raw.toLowerCase();
  switch (kind.kind) {
    case 'uuid':
      return UUID.test(lower) ? lower : undefined;
    case 'hex':
      return HEX.test(lower) ? lower : undefined;
    case 'uuid-or-hex':
      return UUID.test(lower) || HEX.test(lower) ? lower : undefined;
    case 'int': {
      if (!DIGITS.test(raw)) return undefined;
      const value = Number(raw);
      if (value < kind.min || (kind.max !== undefined && value > kind.max)) return undefined;
      return String(value);
    }
    case 'enum':
      return kind.values.find(
        (value) => value === raw || (kind.caseless === true && value.toLowerCase() === lower),
      );
    case 'bool':
      return lower === 'true' || lower === 'false' ? lower : undefined;
    case 'text':
      return raw === '' ? undefined : raw;
  }
}

function badValue(name: string, kind: Value): RestPathResult {
  const expected =
    kind.kind === 'int'
      ? `an integer from ${kind.min}${kind.max === undefined ? '' : ` to ${kind.max}`}`
      : kind.kind === 'enum'
        ? `one of ${kind.values.join(', ')}`
        : kind.kind === 'bool'
          ? 'true or false'
          : kind.kind === 'text'
            ? 'not empty'
            : kind.kind === 'hex'
              ? '0x and hex digits'
              : 'a UUID';
  return { ok: false, code: 'bad_request', message: `"${name}" must be ${expected}` };
}
