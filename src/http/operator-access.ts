/**
 * @module http/operator-access
 * The operator key (`--operator-key`, docs/operations.md "Operator endpoints"): when set, every
 * operator endpoint (metrics, status page and feed, SDK bundle, market picker) answers 401 without it.
 * Scripts send `Authorization: Bearer <key>`; a browser opens `/?operator_key=<key>` once, which
 * stores the key in an HttpOnly, SameSite=Strict cookie (so the page's own requests and its
 * EventSource carry it) and redirects to the same URL without the key.
 *
 * Missing and wrong keys are throttled per client address like API keys (relay/admission/edge-gate.ts
 * `gateOperatorKey`, with the client's address behind trusted proxies): answered later and later,
 * then 429 with `Retry-After` for a lockout, logged once as `operator_key_lockout`.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { clientAddress } from '../relay/admission/client-address.ts';
import type { EdgeAdmission } from '../relay/admission/edge.ts';
import { gateOperatorKey } from '../relay/admission/edge-gate.ts';
import { bearerToken } from '../util/secrets.ts';

export const OPERATOR_COOKIE = 'market_relay_operator';
const QUERY_PARAMETER = 'operator_key';

export interface OperatorKeyGuard {
  key: string;
  /** Holds the throttle of wrong operator keys (shared by the public and the operator port). */
  admission: EdgeAdmission;
  /** Proxies in front of the relay that append to X-Forwarded-For. */
  trustedProxyDepth: number;
}

/** Adds the key check to every route of `scope` (an encapsulated plugin context). */
export function requireOperatorKey(scope: FastifyInstance, guard: OperatorKeyGuard): void {
  const { key, admission, trustedProxyDepth } = guard;
  scope.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const url = new URL(request.url, 'http://relay');
    const fromQuery = url.searchParams.get(QUERY_PARAMETER) ?? undefined;
    const presented =
      bearerToken(request.headers.authorization) ?? cookieValue(request.headers.cookie) ?? fromQuery;
    const address = clientAddress(
      request.raw.socket.remoteAddress,
      request.headers['x-forwarded-for'],
      trustedProxyDepth,
    );
    const refusal = gateOperatorKey(presented, key, admission, address);
    if (refusal !== undefined) {
      if (refusal.lockedOut) {
        request.log.warn(
          { event: 'operator_key_lockout', address: admission.group(address) },
          'an address locked out after repeated wrong operator keys: its requests get 429 for a while',
        );
      }
      // Past the free failures, so that guessing in sequence slows down.
      if (refusal.delayMs > 0) await delay(refusal.delayMs, undefined, { ref: false });
      if (refusal.retryAfterSeconds !== undefined)
        reply.header('retry-after', String(refusal.retryAfterSeconds));
      if (refusal.status === 401) reply.header('www-authenticate', 'Bearer realm="operator"');
      return reply.code(refusal.status).send({ error: refusal.error, message: refusal.message });
    }
    if (fromQuery !== undefined && request.method === 'GET') {
      // Out of the address bar (and history) at once; the cookie carries it from now on.
      url.searchParams.delete(QUERY_PARAMETER);
      return reply
        .header(
          'set-cookie',
          `${OPERATOR_COOKIE}=${encodeURIComponent(key)}; Path=/; HttpOnly; SameSite=Strict`,
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
