/**
 * @module http/relay-app
 * A Fastify app as the relay serves it, the public one and the operator's alike: no log line per
 * request (logs are for notable events), connections closed on shutdown, and the security headers
 * on every response (http/security-headers.ts).
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { registerSecurityHeaders } from './security-headers.ts';

export function createRelayApp(httpLogger: FastifyBaseLogger): FastifyInstance {
  const created = Fastify({
    loggerInstance: httpLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // A keep-alive connection that never sends a request (a browser's spare one) must not hold
    // shutdown past its 5 s; this applies after the preClose hook has closed WebSockets with 1001.
    forceCloseConnections: true,
  });
  registerSecurityHeaders(created);
  return created;
}
