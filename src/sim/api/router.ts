/**
 * @module sim/api/router
 * Matches a request to an endpoint by method and path pattern (`:name` segments are parameters)
 * and turns refusals into the error body. Private endpoints are answered before any routing
 * (docs/upstream.md).
 */
import { errorBodyOf, SimHttpError, type SimRequest, type SimResponse } from './http.ts';
import { privateEndpointAnswer } from './private.ts';

export type RouteHandler = (request: SimRequest, params: Record<string, string>) => SimResponse;

export interface Route {
  method: 'GET' | 'POST';
  /** e.g. `/api/markets/:id/history`. */
  path: string;
  handler: RouteHandler;
}

export function createRouter(routes: readonly Route[]): (request: SimRequest) => SimResponse {
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
          status: error.status,
          body: errorBodyOf(error.message),
          headers: error.headers,
          route: matched,
        };
      }
      const message = error instanceof Error ? error.message : String(error);
      return { status: 500, body: errorBodyOf(`internal error: ${message}`), route: matched };
    }
  };
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
