/**
 * @module sim/api/router
 * Matches a request to an endpoint by method and path pattern (`:name` segments are parameters)
 * and turns refusals into answers, with the profile's status where the interface leaves it open (an
 * unknown or malformed id outside the CLOB, whose statuses are shown). Private endpoints are
 * answered before any routing (docs/upstream.md).
 */
import type { SimulatorProfile } from '../profile.ts';
import { refusal, SimHttpError, type SimRequest, type SimResponse } from './http.ts';
import { privateEndpointAnswer } from './private.ts';

export type RouteHandler = (request: SimRequest, params: Record<string, string>) => SimResponse;

export interface Route {
  method: 'GET' | 'POST';
  /** e.g. `/api/markets/:id/history`. */
  path: string;
  handler: RouteHandler;
}

export function createRouter(
  routes: readonly Route[],
  profile: SimulatorProfile,
): (request: SimRequest) => SimResponse {
  const compiled = routes.map((route) => ({ ...route, segments: route.path.split('/') }));
  return (request) => {
    let matched: string | undefined;
    try {
      const refusal = privateEndpointAnswer(request);
      if (refusal) return refusal;
      const segments = request.path.split('/');
      for (const route of compiled) {
        if (route.method !== request.method) continue;
        const params = match(route.segments, segments);
        if (params) {
          matched = route.path;
          return { ...route.handler(request, params), route: route.path };
        }
      }
      throw new SimHttpError(404, `no endpoint ${request.method} ${request.path}`);
    } catch (error) {
      if (error instanceof SimHttpError) {
        return {
          ...refusal(statusOf(error, request.path, profile), error.message, error.headers),
          route: matched,
        };
      }
      const message = error instanceof Error ? error.message : String(error);
      return { ...refusal(500, `internal error: ${message}`), route: matched };
    }
  };
}

/** The CLOB's statuses for ids are shown (400, 404); elsewhere the profile chooses. */
function statusOf(error: SimHttpError, path: string, profile: SimulatorProfile): number {
  if (error.refusedId === undefined || path.startsWith('/clob/')) return error.status;
  return error.refusedId === 'unknown-id' ? profile.unknownIdStatus : profile.malformedIdStatus;
}

function match(pattern: readonly string[], actual: readonly string[]): Record<string, string> | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let index = 0; index < pattern.length; index++) {
    const expected = pattern[index]!;
    const segment = actual[index]!;
    if (expected.startsWith(':')) {
      if (segment === '') return undefined;
      try {
        params[expected.slice(1)] = decodeURIComponent(segment);
      } catch {
        throw new SimHttpError(400, `malformed path segment ${segment}`);
      }
    } else if (expected !== segment) return undefined;
  }
  return params;
}

/** One GET endpoint of the route table. */
export function get(path: string, handler: RouteHandler): Route {
  return { method: 'GET', path, handler };
}

/** One POST endpoint of the route table. */
export function post(path: string, handler: RouteHandler): Route {
  return { method: 'POST', path, handler };
}
