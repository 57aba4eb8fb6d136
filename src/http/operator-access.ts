/**
 * @module http/operator-access
 * The operator key (`--operator-key`, docs/operations.md "Operator endpoints"): when set, every
 * operator endpoint (metrics, status page and feed, SDK bundle, market picker) answers 401 without it.
 * Scripts send `Authorization: Bearer <key>`; a browser opens `/?operator_key=<key>` once, which
 * stores the key in an HttpOnly, SameSite=Strict cookie (so the page's own requests and its
 * EventSource carry it) and redirects to the same URL without the key.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken, isOneOf } from '../util/secrets.ts';

export const OPERATOR_COOKIE = 'market_relay_operator';
const QUERY_PARAMETER = 'operator_key';

/** Adds the key check to every route of `scope` (an encapsulated plugin context). */
export function requireOperatorKey(scope: FastifyInstance, key: string): void {
  scope.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const url = new URL(request.url, 'http://relay');
    const fromQuery = url.searchParams.get(QUERY_PARAMETER) ?? undefined;
    const presented =
      bearerToken(request.headers.authorization) ?? cookieValue(request.headers.cookie) ?? fromQuery;
    if (presented === undefined || !isOneOf([key], presented)) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer realm="operator"')
        .send({ error: 'unauthorized', message: 'an operator key is required' });
    }
    if (fromQuery !== undefined && request.method === 'GET') {
      // Out of the address bar (and history) at once; the cookie carries it from now on.
      url.searchParams.delete(QUERY_PARAMETER);
      return reply
        .header(
          'set-cookie',
          `${OPERATOR_COOKIE}=${encodeURIComponent(presented)}; Path=/; HttpOnly; SameSite=Strict`,
        )
        .redirect(`${url.pathname}${url.search}`, 303);
    }
    return undefined;
  });
}

function cookieValue(header: string | undefined): string | undefined {
  for (const part of header?.split(';') ?? []) {
    const [name, ...value] = part.trim().split('=');
    if (name !== OPERATOR_COOKIE) continue;
    try {
      return decodeURIComponent(value.join('='));
    } catch {
      return undefined;
    }
  }
  return undefined;
}
