/**
 * @module ws/endpoint
 * `GET /v1/ws` (protocol.md "Transport"): access control before the upgrade, the connection limit,
 * one heartbeat timer for all connections (ping frames plus a `heartbeat` message that browsers can
 * see), and orderly shutdown with 1001.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Socket } from 'node:net';
import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { closeCodes } from '../protocol/messages.ts';
import type { RelayEvents } from '../relay/events.ts';
import type { StreamRegistry } from '../relay/registry.ts';
import { Connection, type ConnectionLimits } from './connection.ts';

export interface WsEndpointOptions {
  registry: StreamRegistry;
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
  readonly connections: ReadonlySet<Connection>;
}

export async function registerWsEndpoint(
  app: FastifyInstance,
  options: WsEndpointOptions,
): Promise<WsEndpoint> {
  const connections = new Set<Connection>();
  let nextId = 1;

  await app.register(websocket, {
    options: { maxPayload: options.maxFrameBytes, perMessageDeflate: false },
    preClose: async () => {
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
      await new Promise<void>((resolve) => app.websocketServer.close(() => resolve()));
    },
  });

  const heartbeat = setInterval(() => {
    const now = new Date();
    for (const connection of connections) if (!connection.heartbeat(now)) connection.terminate();
  }, options.heartbeatMs);
  heartbeat.unref();

  app.get(
    '/v1/ws',
    { websocket: true, preValidation: (request, reply) => authorize(request, reply, options) },
    (ws, request) => {
      const socket = request.raw.socket as Socket;
      const connection = new Connection(nextId++, ws, socket, options);
      if (connections.size >= options.maxConnections) {
        connection.close(closeCodes.tooManyConnections, 'too many connections');
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
    },
  );

  return { connections };
}

/** protocol.md "Transport": 401 without a valid key, 403 for an origin not on the allow-list. */
async function authorize(
  request: FastifyRequest,
  reply: FastifyReply,
  options: WsEndpointOptions,
): Promise<void> {
  const { apiKeys, allowedOrigins } = options;
  if (allowedOrigins !== undefined) {
    const origin = request.headers.origin;
    if (origin !== undefined && !allowedOrigins.includes(origin)) {
      await reply.code(403).send({ error: 'forbidden', message: `origin ${origin} is not allowed` });
      return;
    }
  }
  if (apiKeys !== undefined) {
    const key = presentedKey(request);
    if (key === undefined || !apiKeys.some((candidate) => sameSecret(candidate, key))) {
      await reply.code(401).send({ error: 'unauthorized', message: 'a valid API key is required' });
    }
  }
}

function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header?.startsWith('Bearer ')) return header.slice('Bearer '.length).trim();
  const token = (request.query as Record<string, unknown> | undefined)?.token;
  return typeof token === 'string' ? token : undefined;
}

/** Constant-time comparison, so response timing does not reveal how much of a key matched. */
function sameSecret(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
