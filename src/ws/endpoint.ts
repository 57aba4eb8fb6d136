/**
 * @module ws/endpoint
 * `GET /v1/ws` (protocol.md "Transport"): access control before the upgrade, the connection limit,
 * one heartbeat timer for all connections (ping frames plus a `heartbeat` message that browsers can
 * see), and orderly shutdown with 1001.
 *
 * Upgrades are taken from the HTTP server's `upgrade` event straight into a `ws` server, beside
 * fastify (which serves every other path), rather than through @fastify/websocket's route: that
 * route keeps fastify's request machinery alive for each connection, about 2.4 KB of heap per idle
 * connection, the whole of the relay's excess over a bare `ws` server (docs/benchmarks.md, memory).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { type WebSocket, WebSocketServer } from 'ws';
import { closeCodes } from '../protocol/messages.ts';
import type { Admission } from '../relay/admission.ts';
import type { RelayEvents } from '../relay/events.ts';
import type { StreamRegistry } from '../relay/registry.ts';
import { ClientConnection, type ConnectionLimits } from './client-connection.ts';

const WS_PATH = '/v1/ws';

export interface WsEndpointOptions {
  registry: StreamRegistry;
  admission: Admission;
  events: RelayEvents;
  limits: ConnectionLimits;
  heartbeatMs: number;
  maxConnections: number;
  /** Largest client frame accepted; larger ones close the connection with 1009. */
  maxFrameBytes: number;
  apiKeys?: readonly string[];
  allowedOrigins?: readonly string[];
}

export interface WsEndpoint {
  readonly connections: ReadonlySet<ClientConnection>;
}

export function registerWsEndpoint(app: FastifyInstance, options: WsEndpointOptions): WsEndpoint {
  const connections = new Set<ClientConnection>();
  let nextId = 1;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxFrameBytes,
    perMessageDeflate: false,
    clientTracking: false,
  });

  const onConnection = (ws: WebSocket, socket: Socket, apiKey: string | undefined): void => {
    const connection = new ClientConnection(nextId++, ws, socket, options, apiKey);
    if (connections.size >= options.maxConnections) {
      connection.close(closeCodes.tooManyConnections, 'too many connections');
      connection.dispose();
      return;
    }
    connections.add(connection);
    options.events.emit('connection:open', { id: connection.id, remoteAddress: socket.remoteAddress });
    ws.on('close', (code, reason) => {
      connections.delete(connection);
      connection.dispose();
      options.events.emit('connection:close', {
        id: connection.id,
        code,
        reason: reason.toString('utf8'),
        durationMs: Date.now() - connection.openedAt,
      });
    });
    ws.on('error', () => connection.terminate());
  };

  const onUpgrade = (request: IncomingMessage, socket: Socket, head: Buffer): void => {
    // Node drops its own error listener before emitting 'upgrade'; a reset must not crash us.
    socket.on('error', () => socket.destroy());
    const url = new URL(request.url ?? '/', 'http://relay');
    if (url.pathname !== WS_PATH) {
      refuse(socket, 404, 'not_found', `no WebSocket endpoint at ${url.pathname}; use ${WS_PATH}`);
      return;
    }
    const refusal = authorize(request, url, options);
    if (refusal !== undefined) {
      refuse(socket, refusal.status, refusal.error, refusal.message);
      return;
    }
    // The key (when keys are required) groups connections for the per-key isolation limits.
    const apiKey = options.apiKeys === undefined ? undefined : presentedKey(request, url);
    wss.handleUpgrade(request, socket, head, (ws) => onConnection(ws, socket, apiKey));
  };
  app.server.on('upgrade', onUpgrade);

  const heartbeat = setInterval(() => {
    const now = new Date();
    for (const connection of connections) if (!connection.heartbeat(now)) connection.terminate();
  }, options.heartbeatMs);
  heartbeat.unref();

  app.addHook('preClose', async () => {
    app.server.off('upgrade', onUpgrade);
    clearInterval(heartbeat);
    const closed = [...connections].map(
      (connection) =>
        new Promise<void>((resolve) => {
          connection.onceClosed(resolve);
          connection.close(closeCodes.goingAway, 'relay shutting down');
        }),
    );
    // A client that does not answer the close handshake must not hold up shutdown.
    const grace = setTimeout(() => {
      for (const connection of connections) connection.terminate();
    }, 1_000);
    await Promise.all(closed);
    clearTimeout(grace);
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });

  return { connections };
}

/** protocol.md "Transport": 401 without a valid key, 403 for an origin not on the allow-list. */
function authorize(
  request: IncomingMessage,
  url: URL,
  options: WsEndpointOptions,
): { status: number; error: string; message: string } | undefined {
  const { apiKeys, allowedOrigins } = options;
  const origin = request.headers.origin;
  if (allowedOrigins !== undefined && origin !== undefined && !allowedOrigins.includes(origin)) {
    return { status: 403, error: 'forbidden', message: `origin ${origin} is not allowed` };
  }
  if (apiKeys !== undefined) {
    const key = presentedKey(request, url);
    if (key === undefined || !apiKeys.some((candidate) => sameSecret(candidate, key))) {
      return { status: 401, error: 'unauthorized', message: 'a valid API key is required' };
    }
  }
  return undefined;
}

function presentedKey(request: IncomingMessage, url: URL): string | undefined {
  const header = request.headers.authorization;
  if (header?.startsWith('Bearer ')) return header.slice('Bearer '.length).trim();
  return url.searchParams.get('token') ?? undefined;
}

/**
 * Constant-time comparison, so response timing reveals neither how much of a key matched nor its
 * length: both sides are hashed to 32 bytes first, so there is no early return on a length difference.
 */
function sameSecret(expected: string, given: string): boolean {
  return timingSafeEqual(sha256(expected), sha256(given));
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Answers an upgrade request with a plain HTTP error (before any WebSocket exists) and hangs up. */
function refuse(socket: Socket, status: number, error: string, message: string): void {
  const body = JSON.stringify({ error, message });
  const reason = STATUS_CODES[status] ?? 'Error';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
