/**
 * @module sse/endpoint
 * `GET /v1/sse` (docs/protocol.md "Server-Sent Events"): the WebSocket's streams and messages for
 * clients that can only speak plain HTTP. The request names the streams in its query (what a
 * `subscribe` would carry); a reconnect's `Last-Event-ID` names where each stream stands, and the
 * relay replays what was missed from the stream's history (no snapshot) when it still holds it.
 * Same access control, connection limits (the relay's, and the per-address and per-key caps in
 * the WebSocket's own counters) and heartbeat period as the WebSocket.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { type Channel, isChannel } from '../protocol/channels.ts';
import { issueCode, subscribeRequest } from '../protocol/requests.ts';
import type { AccessPolicy } from '../relay/admission/access.ts';
import { capReason, type EdgeAdmission, edgeClient } from '../relay/admission/edge.ts';
import { gateAccess } from '../relay/admission/edge-gate.ts';
import type { MarketAdmission } from '../relay/admission/market.ts';
import type { RefusalReason, RelayEvents } from '../relay/events.ts';
import {
  fetchClusterReplay,
  joinStreams,
  refusalError,
  sendFirstMessages,
} from '../relay/session/subscription.ts';
import type { ClusterReplay, StreamRegistry } from '../relay/streams/registry.ts';
import type { SlowReaderLimits } from '../relay/streams/slow-consumer.ts';
import { decodeEventId, positionToken } from './event-id.ts';
import { SseConnection } from './sse-connection.ts';

export const SSE_PATH = '/v1/sse';

/** How soon a browser's EventSource reconnects after the response ends (the SSE `retry:` field). */
const RECONNECT_MS = 1_000;

export interface SseEndpointOptions extends AccessPolicy {
  registry: StreamRegistry;
  marketAdmission: MarketAdmission;
  events: RelayEvents;
  limits: SlowReaderLimits & { maxStreams: number };
  heartbeatMs: number;
  maxConnections: number;
  /** Connections held by other transports, counted against the same `maxConnections`. */
  otherConnections: () => number;
  /** The per-address and per-key counters, shared with the WebSocket endpoint. */
  admission: EdgeAdmission;
  trustedProxyDepth: number;
}

export interface SseEndpoint {
  readonly connections: ReadonlySet<SseConnection>;
  /**
   * Serves the endpoint on another app too (the operator port's status page, whose book view may
   * use SSE), with the same connections, limits and shutdown.
   */
  attach(other: FastifyInstance): void;
}

export function registerSseEndpoint(app: FastifyInstance, options: SseEndpointOptions): SseEndpoint {
  const connections = new Set<SseConnection>();
  let nextId = 1;

  const serve = (instance: FastifyInstance): void => {
    instance.get(SSE_PATH, (request, reply) => {
      reply.hijack();
      open(request.raw, reply.raw);
    });
  };
  serve(app);

  const open = (request: IncomingMessage, response: ServerResponse): void => {
    const url = new URL(request.url ?? '/', 'http://relay');
    const client = edgeClient(request, url, options);
    const group = options.admission.group(client.address);
    const refusedFor = (reason: RefusalReason, lockedOut?: boolean): void => {
      options.events.emit('edge:refused', { reason, address: group, ...(lockedOut ? { lockedOut } : {}) });
    };
    const denied = gateAccess(request.headers, url, options, options.admission, client.address);
    if (denied !== undefined) {
      refusedFor(denied.reason, denied.lockedOut);
      const retryAfter = denied.retryAfterSeconds;
      const answer = () =>
        refuse(
          response,
          denied.status,
          denied.error,
          denied.message,
          retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) },
        );
      // A wrong key past the free failures waits, so that guessing in sequence slows down.
      if (denied.delayMs > 0) setTimeout(answer, denied.delayMs).unref();
      else answer();
      return;
    }
    const verdict = options.admission.admitConnection(client.address, client.key);
    if (verdict === 'rate') {
      refusedFor('rate');
      refuse(response, 429, 'too_many_requests', 'too many new connections from this address; retry later', {
        'retry-after': '1',
      });
      return;
    }
    if (connections.size + options.otherConnections() >= options.maxConnections) {
      refusedFor('global');
      refuse(response, 503, 'too_many_connections', 'the relay is at its connection limit');
      return;
    }
    if (verdict !== 'ok') {
      refusedFor(verdict);
      refuse(response, 429, 'too_many_connections', capReason(verdict));
      return;
    }
    const parsed = parseSelection(url, options.limits.maxStreams);
    if (!parsed.ok) {
      refuse(response, 400, parsed.code, parsed.message);
      return;
    }
    const { channel, markets, depth } = parsed;

    const lastEventId = request.headers['last-event-id'] ?? url.searchParams.get('lastEventId') ?? undefined;
    const positions =
      typeof lastEventId === 'string' ? decodeEventId(lastEventId, markets.length) : undefined;
    const resume = Object.fromEntries(
      markets.flatMap((market, i) => (positions?.[i] === undefined ? [] : [[market, positions[i]]])),
    );
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      // Proxies that buffer responses (nginx) would hold the events back.
      'x-accel-buffering': 'no',
    });
    response.write(`retry: ${RECONNECT_MS}\n\n`);

    const streamKeys = SseConnection.streamKeys(channel, markets, depth);
    const tokens = markets.map(() => '');
    const connection = new SseConnection(nextId++, response, options, streamKeys, tokens);
    connections.add(connection);
    options.admission.opened(client.address, client.key);
    // The same isolation limits as a WebSocket's subscribe (docs/operations.md "Isolation").
    options.marketAdmission.open(connection, client.key);
    const refused = options.marketAdmission.admit(connection, channel, markets);
    const selection = { channel, markets, depth };
    const join = (cluster: ClusterReplay | undefined): void => {
      const { joined, recovered } = joinStreams(
        options.registry,
        connection,
        selection,
        resume,
        refused,
        cluster,
      );
      for (const { market, stream, replay } of joined) {
        connection.track(stream);
        const position = resume[market];
        // A replayed stream carries on from where the client stood; the others start with a snapshot.
        if (replay !== undefined && position !== undefined)
          tokens[markets.indexOf(market)] = positionToken(position);
      }
      connection.send({
        type: 'subscribed',
        channel,
        markets,
        ...(depth === undefined ? {} : { depth }),
        ...(lastEventId === undefined
          ? {}
          : { recovered: { ...Object.fromEntries(markets.map((market) => [market, false])), ...recovered } }),
      });
      for (const [market, refusal] of refused) connection.send(refusalError(channel, market, refusal));
      sendFirstMessages(connection, joined);
      connection.onceClosed(() => {
        connections.delete(connection);
        options.admission.closed(client.address, client.key);
        options.marketAdmission.close(connection);
        connection.dispose();
      });
    };
    // Cluster mode: a position from another relay is resumed from the cluster's history.
    const fetching = fetchClusterReplay(options.registry, selection, resume);
    if (fetching === undefined) join(undefined);
    else
      void fetching.then(join, () => {
        join(undefined);
      });
  };

  const heartbeat = setInterval(() => {
    const now = new Date();
    for (const connection of connections) connection.heartbeat(now);
  }, options.heartbeatMs);
  heartbeat.unref();

  app.addHook('preClose', async () => {
    clearInterval(heartbeat);
    const closed = [...connections].map(
      (connection) =>
        new Promise<void>((resolve) => {
          connection.onceClosed(resolve);
          connection.close('relay shutting down');
        }),
    );
    await Promise.all(closed);
  });

  return { connections, attach: serve };
}

type Selection =
  | { ok: true; channel: Channel; markets: string[]; depth: 10 | 50 | null | undefined }
  | {
      ok: false;
      code: 'bad_request' | 'path_not_public' | 'unknown_channel' | 'limit_exceeded';
      message: string;
    };

/** The query as a `subscribe` would carry it, checked by the same schema. */
function parseSelection(url: URL, maxStreams: number): Selection {
  const query = url.searchParams;
  const channel = query.get('channel') ?? '';
  // A path may hold commas: each `rest` path comes in a `paths` parameter of its own.
  const markets = [
    ...new Set(
      channel === 'rest'
        ? query.getAll('paths')
        : query.getAll('markets').flatMap((value) => value.split(',').filter((id) => id !== '')),
    ),
  ];
  const depthText = query.get('depth');
  const depth = depthText === null || depthText === 'full' ? undefined : Number(depthText);
  const result = subscribeRequest.safeParse({ op: 'subscribe', channel, markets, depth });
  if (!result.success) {
    const issue = result.error.issues[0];
    return {
      ok: false,
      code: issueCode(issue),
      message: `${issue?.path.join('.') || 'query'}: ${issue?.message}`,
    };
  }
  if (!isChannel(channel))
    return { ok: false, code: 'unknown_channel', message: `unknown channel "${channel}"` };
  if (channel !== 'book' && depthText !== null)
    return { ok: false, code: 'bad_request', message: '`depth` applies to the book channel only' };
  if (markets.length > maxStreams)
    return { ok: false, code: 'limit_exceeded', message: `at most ${maxStreams} streams per connection` };
  return {
    ok: true,
    channel,
    // In their one spelling, each once.
    markets: [...new Set(result.data.markets)],
    depth: channel === 'book' ? (result.data.depth ?? null) : undefined,
  };
}

function refuse(
  response: ServerResponse,
  status: number,
  error: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (response.destroyed || response.writableEnded) return;
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify({ error, message }));
}
