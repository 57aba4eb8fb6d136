/**
 * @module http/security-headers
 * Headers on every response of an app: `nosniff` and no referrer everywhere; on HTML pages also a
 * Content-Security-Policy that allows only this relay's own scripts, styles and connections (the
 * status page loads nothing from elsewhere and has no inline code) and forbids framing.
 */
import type { FastifyInstance } from 'fastify';

export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // The page's favicon is an empty data: URL.
  "img-src 'self' data:",
  // 'self' covers the WebSocket back to the same host (CSP level 3).
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function registerSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('text/html')) {
      reply.header('content-security-policy', PAGE_CSP);
      reply.header('x-frame-options', 'DENY');
    }
    return payload;
  });
}
