/**
 * @module http/cors
 * Cross-origin access to the relay's public HTTP paths (docs/operations.md "CORS"): the REST front,
 * `/v1/book/:market`, `/v1/history/:channel`, `/v1/sse` and `/health`, so a browser page on another origin can read them.
 * It follows `--allowed-origins`, the rule the WebSocket applies: without a list every origin may
 * read (`Access-Control-Allow-Origin: *`, these paths carry no cookies); with one, a listed origin
 * (or the relay's own) is echoed, and any other is answered 403 before any work is done for it,
 * preflight included. Operator endpoints get no CORS headers.
 * @see https://fetch.spec.whatwg.org/#http-cors-protocol
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type AccessPolicy, isOriginAllowed } from '../relay/admission/access.ts';
import { SSE_PATH } from '../sse/endpoint.ts';
import { publicRoutes } from './rest-front/public-paths.ts';

/** How long a browser may reuse a preflight's answer (seconds). */
const PREFLIGHT_MAX_AGE_S = 600;
/** What a page may send: the API key, the SSE resume point, and JSON bodies (the batch endpoints). */
const ALLOWED_HEADERS = 'authorization, content-type, last-event-id';
/** What a page may read beyond the simple headers. */
const EXPOSED_HEADERS = 'retry-after, via';

// The history export too: the SDK's `history()` reads it from a page as it reads the live streams.
const publicTemplates = [
  ...publicRoutes.map((route) => route.path),
  '/v1/book/:market',
  '/v1/history/:channel',
  SSE_PATH,
  '/health',
];
const publicPatterns = publicTemplates.map(
  (template) => new RegExp(`^${template.replace(/:[A-Za-z]+/g, '[^/]+')}$`),
);

/** Whether `path` (no query) is one of the relay's public HTTP paths. */
export function isPublicPath(path: string): boolean {
  return publicPatterns.some((pattern) => pattern.test(path));
}

export function registerCors(app: FastifyInstance, access: AccessPolicy): void {
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin === undefined || request.method === 'OPTIONS' || !isPublicPath(pathOf(request))) return;
    if (!isOriginAllowed(request.headers, access)) return refuse(reply);
    // On the raw response, so that the hijacked SSE response carries them too.
    allowOrigin(reply, origin, access);
    reply.raw.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
  });

  app.options('*', async (request, reply) => {
    const origin = request.headers.origin;
    if (!isPublicPath(pathOf(request))) return reply.code(404).send({ error: 'not_found' });
    if (origin === undefined || request.headers['access-control-request-method'] === undefined)
      return reply
        .code(204)
        .header('allow', allowedMethods(pathOf(request)))
        .send();
    if (!isOriginAllowed(request.headers, access)) return refuse(reply);
    allowOrigin(reply, origin, access);
    return reply
      .code(204)
      .header('access-control-allow-methods', allowedMethods(pathOf(request)))
      .header('access-control-allow-headers', ALLOWED_HEADERS)
      .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_S))
      .send();
  });
}

function pathOf(request: FastifyRequest): string {
  return (request.raw.url ?? '/').split('?', 1)[0] ?? '/';
}

function allowedMethods(path: string): string {
  const post = publicRoutes.some((route) => route.method === 'POST' && route.path === path);
  return post ? 'POST, OPTIONS' : 'GET, OPTIONS';
}

function allowOrigin(reply: FastifyReply, origin: string, access: AccessPolicy): void {
  if (access.allowedOrigins === undefined) {
    reply.raw.setHeader('access-control-allow-origin', '*');
    return;
  }
  reply.raw.setHeader('access-control-allow-origin', origin);
  reply.raw.setHeader('vary', 'Origin');
}

function refuse(reply: FastifyReply): FastifyReply {
  return reply.code(403).send({ error: 'forbidden', message: 'this origin is not allowed' });
}
