/**
 * @module ws/endpoint
 * `GET /v1/ws` (protocol.md "Transport"): a client's arrival (relay/session/arrival.ts) answered the
 * WebSocket's way (an HTTP error before the upgrade, a close code after it), the pending
 * connections, one heartbeat timer for all connections (ping frames plus a `heartbeat` message that
 * browsers can see), refusing newcomers while the relay drains, and orderly shutdown with 1001.
 *
 * Upgrades are taken from the HTTP server's `upgrade` event straight into a `ws` server, beside
 * fastify (which serves every other path), rather than through @fastify/websocket's route: that
 * route keeps fastify's request machinery alive for each connection: heap that every idle
 * connection would hold and a bare `ws` server does not.
 */
import { type IncomingMessage, type Server, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { type WebSocket, WebSocketServer } from 'ws';
import { COMPACT_SUBPROTOCOL } from '../../packages/protocol/src/protocol/compact.ts';
import { closeCodes } from '../../packages/protocol/src/protocol/messages.ts';
import type { AccessPolicy } from '../relay/admission/access.ts';
import { capReason, type EdgeAdmission, type EdgeLimits } from '../relay/admission/edge.ts';
import type { MarketAdmission } from '../relay/admission/market.ts';
import type { RefusalReason, RelayEvents } from '../relay/events.ts';
import { type ArrivalContext, type ArrivedClient, arrive, capOf, seat } from '../relay/session/arrival.ts';
import type { ReplayService } from '../relay/session/replay/replays.ts';
import type { SessionIds } from '../relay/session/session-ids.ts';
import type { SinceReads } from '../relay/session/since-reads.ts';
import type { StreamRegistry } from '../relay/streams/registry.ts';
import { ClientConnection, heartbeatAll } from './client-connection.ts';
import type { ConnectionContext, ConnectionLimits } from './connection-context.ts';
import { guardPendingConnections, type PendingGuard } from './pending-connections.ts';
import { WriteCoalescer } from './write-coalescer.ts';

const WS_PATH = '/v1/ws';

export interface WsEndpointOptions extends AccessPolicy {
  registry: StreamRegistry;
  /** Which new markets a subscription may add (relay/admission/market.ts; the edge caps are relay/admission/edge.ts). */
  marketAdmission: MarketAdmission;
  events: RelayEvents;
  limits: ConnectionLimits;
  /** 0: every stream frame written at once; otherwise write coalescing (ws/write-coalescer.ts) with this window for busy connections. */
  coalesceMs: number;
  heartbeatMs: number;
  maxConnections: number;
  /** Largest client frame accepted; larger ones close the connection with 1009. */
  maxFrameBytes: number;
  /** Negotiate permessage-deflate with clients that offer it (protocol.md "Compression"). */
  compression: boolean;
  /** Connections held by other transports (SSE), counted against the same `maxConnections`. */
  otherConnections?: () => number;
  /** Pending connections, trusted proxies (docs/operations.md "Edge limits"). */
  edge: EdgeLimits;
  /** The per-address and per-key counters, shared with the SSE endpoint. */
  admission: EdgeAdmission;
  /** Connection numbers, shared with the SSE endpoint. */
  sessionIds: SessionIds;
  /** The history reads of subscriptions with `since` (channels that serve history). */
  sinceReads?: SinceReads;
  /** The replays of the record (docs/protocol.md "Replay"). */
  replays?: ReplayService;
}

export interface WsEndpoint {
  readonly connections: ReadonlySet<ClientConnection>;
  /** Serves the endpoint on another HTTP server too (the operator port's status page). */
  attach(server: Server): void;
  /** The relay is draining: every upgrade from now on is answered 503 `shutting_down`. */
  stopAccepting(): void;
}

export function registerWsEndpoint(app: FastifyInstance, options: WsEndpointOptions): WsEndpoint {
  const connections = new Set<ClientConnection>();
  const context: ConnectionContext = {
    registry: options.registry,
    marketAdmission: options.marketAdmission,
    events: options.events,
    limits: options.limits,
    coalescer: new WriteCoalescer(options.coalesceMs),
    ...(options.sinceReads === undefined ? {} : { sinceReads: options.sinceReads }),
    ...(options.replays === undefined ? {} : { replays: options.replays }),
  };
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxFrameBytes,
    // Without context takeover every message is compressed on its own, so one compressed frame
    // serves every compressing client (relay/streams/frame.ts); the relay compresses, never ws, whose
    // deflate is per socket. Not keeping the client's context either saves a window per client.
    perMessageDeflate: options.compression
      ? { serverNoContextTakeover: true, clientNoContextTakeover: true }
      : false,
    clientTracking: false,
    handleProtocols: selectSubprotocol,
  });

  // What the relay answered in Sec-WebSocket-Extensions, per upgrade request: `ws.extensions` names
  // the extensions only, and the parameters decide whether the shared compressed frames fit.
  const negotiated = new WeakMap<IncomingMessage, string>();
  wss.on('headers', (headers, request) => {
    const line = headers.find((header) => header.toLowerCase().startsWith('sec-websocket-extensions:'));
    if (line !== undefined) negotiated.set(request, line.slice(line.indexOf(':') + 1));
  });

  const { admission } = options;
  const arrival: ArrivalContext = {
    ...(options.apiKeys === undefined ? {} : { apiKeys: options.apiKeys }),
    ...(options.allowedOrigins === undefined ? {} : { allowedOrigins: options.allowedOrigins }),
    admission,
    events: options.events,
    trustedProxyDepth: options.edge.trustedProxyDepth,
  };
  const refusedFor = (reason: RefusalReason, address: string): void => {
    options.events.emit('edge:refused', { reason, address });
  };

  /** Connections refused after the upgrade, still within their close grace. */
  const refused = new Set<ClientConnection>();
  let accepting = true;

  const onConnection = (ws: WebSocket, socket: Socket, client: ArrivedClient, deflate: boolean): void => {
    const atGlobalCap = connections.size + (options.otherConnections?.() ?? 0) >= options.maxConnections;
    const cap = capOf(client, atGlobalCap, arrival);
    const connection = new ClientConnection(options.sessionIds.next(), ws, socket, context, {
      form: { encoding: ws.protocol === COMPACT_SUBPROTOCOL ? 'compact' : 'json', deflate },
      ...(client.key === undefined ? {} : { apiKey: client.key }),
      addressGroup: arrival.admission.group(client.address),
      ...(cap === undefined ? { onClose: seat(client, arrival) } : {}),
    });
    ws.on('close', (code, reason) => {
      connections.delete(connection);
      refused.delete(connection);
      connection.dispose();
      options.events.emit('connection:close', {
        id: connection.id,
        // What the relay decided, also when the client never read as far as the close frame.
        code: connection.sentCloseCode ?? code,
        by: connection.closedBy,
        reason: reason.toString('utf8'),
        durationMs: Date.now() - connection.openedAt,
      });
    });
    ws.on('error', (error: Error & { code?: string }) => {
      const sentCode = frameErrorCloseCode(error);
      if (sentCode === undefined) connection.terminate();
      else connection.closedOnBadFrame(sentCode);
    });
    if (cap !== undefined) {
      // After the upgrade, so that a browser sees why (it cannot read an HTTP refusal).
      refused.add(connection);
      connection.closeForLimit(
        closeCodes.tooManyConnections,
        cap === 'global' ? 'too many connections' : capReason(cap),
      );
      return;
    }
    connections.add(connection);
    options.events.emit('connection:open', { id: connection.id, remoteAddress: client.address });
  };

  const onUpgrade = (request: IncomingMessage, socket: Socket, head: Buffer): void => {
    // Node drops its own error listener before emitting 'upgrade'; a reset must not crash us.
    socket.on('error', () => socket.destroy());
    // Over its address's pending share (counted when it connected): answered, never served.
    const early = guards.map((guard) => guard.refusalOf(socket)).find((found) => found !== undefined);
    if (early !== undefined) {
      refuse(socket, early.status, early.error, early.message, { 'Retry-After': '1' });
      return;
    }
    if (!accepting) {
      // Draining (docs/operations.md "Shutdown"): another relay of the cluster takes the client.
      refuse(socket, 503, 'shutting_down', 'the relay is shutting down; connect to another relay', {
        'Retry-After': '1',
      });
      return;
    }
    const url = new URL(request.url ?? '/', 'http://relay');
    if (url.pathname !== WS_PATH) {
      refuse(socket, 404, 'not_found', `no WebSocket endpoint here; use ${WS_PATH}`);
      return;
    }
    // Refused before the upgrade: a client reconnecting in a loop costs no WebSocket.
    const arrived = arrive(request, url, arrival);
    if (!arrived.ok) {
      const { status, error, message, headers, delayMs } = arrived.refusal;
      const answer = () => refuse(socket, status, error, message, headers);
      if (delayMs > 0) setTimeout(answer, delayMs).unref();
      else answer();
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) =>
      onConnection(ws, socket, arrived.client, sharesCompressedFrames(negotiated.get(request) ?? '')),
    );
  };
  const detachers: (() => void)[] = [];
  const guards: PendingGuard[] = [];
  const attach = (server: Server) => {
    server.on('upgrade', onUpgrade);
    const guard = guardPendingConnections(server, admission, options.edge.headersTimeoutMs, refusedFor);
    guards.push(guard);
    detachers.push(() => {
      server.off('upgrade', onUpgrade);
      guard.detach();
    });
  };
  attach(app.server);
  // A plain GET (a browser tab, curl) is told what the path wants instead of a bare 404.
  app.get(WS_PATH, (_request, reply) =>
    reply
      .code(426)
      .header('upgrade', 'websocket')
      .send({
        error: 'upgrade_required',
        message: `GET ${WS_PATH} is a WebSocket endpoint: connect with a WebSocket client (docs/protocol.md)`,
      }),
  );

  const heartbeat = setInterval(heartbeatAll, options.heartbeatMs, connections);
  heartbeat.unref();

  app.addHook('preClose', async () => {
    for (const detach of detachers) detach();
    clearInterval(heartbeat);
    for (const connection of refused) connection.terminate();
    context.coalescer.flushNow();
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

  return {
    connections,
    attach,
    stopAccepting: () => {
      accepting = false;
    },
  };
}

/**
 * Whether the negotiated extensions (the `Sec-WebSocket-Extensions` the relay answered) let the
 * connection take the shared compressed frames: permessage-deflate without server context
 * takeover, and a 15-bit window (a client asking for a smaller one gets plain frames, which are
 * always allowed: RFC 7692 section 6).
 */
export function sharesCompressedFrames(extensions: string): boolean {
  const deflate = extensions
    .split(',')
    .map((offer) => offer.split(';').map((part) => part.trim()))
    .find(([name]) => name === 'permessage-deflate');
  if (deflate === undefined || !deflate.includes('server_no_context_takeover')) return false;
  const bits = deflate.find((param) => param.startsWith('server_max_window_bits'));
  return bits === undefined || bits.split('=')[1]?.trim() === '15';
}

/**
 * The subprotocol answered to a client's offer (protocol.md "Compact encoding"): the compact
 * encoding when offered; otherwise the first one offered, as ws does by default, so that a client
 * whose library insists on some subprotocol still connects and gets JSON.
 */
export function selectSubprotocol(offered: ReadonlySet<string>): string | false {
  if (offered.has(COMPACT_SUBPROTOCOL)) return COMPACT_SUBPROTOCOL;
  const [first] = offered;
  return first ?? false;
}

/** Answers an upgrade request with a plain HTTP error (before any WebSocket exists) and hangs up. */
function refuse(
  socket: Socket,
  status: number,
  error: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (socket.destroyed || socket.writableEnded) return;
  const body = JSON.stringify({ error, message });
  const reason = STATUS_CODES[status] ?? 'Error';
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra.join('')}Connection: close\r\n\r\n${body}`,
  );
}

/**
 * The close code ws has already sent when it reports a bad client frame (its documented `WS_ERR_*`
 * codes): 1007 for text that is not UTF-8, 1009 for a frame over the limit, 1002 for the rest.
 * Undefined for a socket error, where nothing was sent and nothing more can be read.
 */
function frameErrorCloseCode(error: { code?: string }): number | undefined {
  if (error.code === 'WS_ERR_INVALID_UTF8') return closeCodes.invalidPayload;
  if (error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') return closeCodes.frameTooLarge;
  return error.code?.startsWith('WS_ERR_') ? closeCodes.protocolError : undefined;
}
