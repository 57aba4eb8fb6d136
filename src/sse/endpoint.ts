/**
 * @module sse/endpoint
 * `GET /v1/sse` (docs/protocol.md "Server-Sent Events"): the WebSocket's streams and messages for
 * clients that can only speak plain HTTP. The request names the streams in its query (what a
 * `subscribe` would carry); a reconnect's `Last-Event-ID` names where each stream stands, and the
 * relay replays what was missed from the stream's history (no snapshot) when it still holds it.
 * The client's arrival and its session are the WebSocket's (relay/session/): the same access
 * control, connection limits (the relay's, and the per-address and per-key caps in the same
 * counters), join sequence and answers; this endpoint answers refusals as HTTP errors, reads the
 * query and `Last-Event-ID` into a `subscribe`, and keeps the same heartbeat period.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { idsArePaths, idsField } from '../../packages/protocol/src/channels/registry.ts';
import { bookDepths, type SubscribeRequest } from '../../packages/protocol/src/protocol/messages.ts';
import { issueCode, subscribeRequest } from '../../packages/protocol/src/protocol/requests.ts';
import { capReason } from '../relay/admission/edge.ts';
import type { MarketAdmission } from '../relay/admission/market.ts';
import { type ArrivalContext, arrive, capOf, seat } from '../relay/session/arrival.ts';
import type { SessionLimits } from '../relay/session/session-context.ts';
import type { SessionIds } from '../relay/session/session-ids.ts';
import type { SinceReads } from '../relay/session/since-reads.ts';
import { checkSelection } from '../relay/session/subscription.ts';
import type { StreamRegistry } from '../relay/streams/registry.ts';
import { decodeEventId } from './event-id.ts';
import { SseConnection } from './sse-connection.ts';

export const SSE_PATH = '/v1/sse';

/** How soon a browser's EventSource reconnects after the response ends (the SSE `retry:` field). */
const RECONNECT_MS = 1_000;

export interface SseEndpointOptions extends ArrivalContext {
  registry: StreamRegistry;
  marketAdmission: MarketAdmission;
  limits: SessionLimits;
  heartbeatMs: number;
  maxConnections: number;
  /** Connections held by other transports, counted against the same `maxConnections`. */
  otherConnections: () => number;
  /** Connection numbers, shared with the WebSocket endpoint. */
  sessionIds: SessionIds;
  /** The history reads of subscriptions with `since` (channels that serve history). */
  sinceReads?: SinceReads;
}

export interface SseEndpoint {
  readonly connections: ReadonlySet<SseConnection>;
  /**
   * Serves the endpoint on another app too (the operator port's status page, whose book view may
   * use SSE), with the same connections, limits and shutdown.
   */
  attach(other: FastifyInstance): void;
  /** The relay is draining: every request from now on is answered 503 `shutting_down`. */
  stopAccepting(): void;
}

export function registerSseEndpoint(app: FastifyInstance, options: SseEndpointOptions): SseEndpoint {
  const connections = new Set<SseConnection>();
  let accepting = true;
  // Runs only while SSE clients are connected: a relay serving WebSocket clients alone runs none of this.
  const heartbeats = new Heartbeats(connections, options.heartbeatMs);

  const serve = (instance: FastifyInstance): void => {
    instance.get(SSE_PATH, (request, reply) => {
      reply.hijack();
      open(request.raw, reply.raw);
    });
  };
  serve(app);

  const open = (request: IncomingMessage, response: ServerResponse): void => {
    if (!accepting) {
      refuse(response, 503, 'shutting_down', 'the relay is shutting down; connect to another relay', {
        'retry-after': '1',
      });
      return;
    }
    const url = new URL(request.url ?? '/', 'http://relay');
    const arrived = arrive(request, url, options);
    if (!arrived.ok) {
      const { status, error, message, headers, delayMs } = arrived.refusal;
      const answer = () => refuse(response, status, error, message, headers);
      if (delayMs > 0) setTimeout(answer, delayMs).unref();
      else answer();
      return;
    }
    const { client } = arrived;
    const cap = capOf(
      client,
      connections.size + options.otherConnections() >= options.maxConnections,
      options,
    );
    if (cap === 'global') {
      refuse(response, 503, 'too_many_connections', 'the relay is at its connection limit');
      return;
    }
    if (cap !== undefined) {
      refuse(response, 429, 'too_many_connections', capReason(cap));
      return;
    }
    const lastEventId = request.headers['last-event-id'] ?? url.searchParams.get('lastEventId') ?? undefined;
    // A reconnect resumes where its events stopped: the query's `since` was for the first connect
    // (and may by now be past its bound).
    const parsed = parseQuery(url, lastEventId === undefined);
    const recordAgeMs = options.sinceReads?.record?.retention.maxAgeMs;
    const checked = parsed.ok
      ? checkSelection(parsed.request, options.limits.maxStreams, new Map(), recordAgeMs)
      : parsed;
    if (!checked.ok) {
      refuse(response, 400, checked.code, checked.message);
      return;
    }
    const { channel, markets, depth, group, interval, threshold } = checked.selection;
    const { since } = parsed.ok ? parsed.request : {};

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

    const connection = new SseConnection(
      options.sessionIds.next(),
      response,
      options,
      SseConnection.streamKeys(channel, markets, depth, group),
      {
        apiKey: client.key,
        addressGroup: options.admission.group(client.address),
        onClose: seat(client, options),
      },
    );
    connections.add(connection);
    heartbeats.start();
    connection.onceClosed(() => {
      connections.delete(connection);
      connection.dispose();
      if (connections.size === 0) heartbeats.stop();
    });
    // The request is a `subscribe` of the whole selection; a reconnect resumes every stream of it.
    connection.session.handle({
      op: 'subscribe',
      channel,
      markets: [...markets],
      ...(depth === undefined ? {} : { depth }),
      ...(group === undefined ? {} : { group }),
      ...(interval === null ? {} : { interval }),
      ...(threshold == null ? {} : { threshold }),
      ...(since === undefined ? {} : { since }),
      ...(lastEventId === undefined ? {} : { resume, resumesAll: true }),
    });
  };

  app.addHook('preClose', async () => {
    heartbeats.stop();
    const closed = [...connections].map(
      (connection) =>
        new Promise<void>((resolve) => {
          connection.onceClosed(resolve);
          connection.close('relay shutting down');
        }),
    );
    await Promise.all(closed);
  });

  return {
    connections,
    attach: serve,
    stopAccepting: () => {
      accepting = false;
    },
  };
}

/** One timer beats every connection's heartbeat, kept only while there is a connection. */
class Heartbeats {
  readonly #connections: ReadonlySet<SseConnection>;
  readonly #periodMs: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(connections: ReadonlySet<SseConnection>, periodMs: number) {
    this.#connections = connections;
    this.#periodMs = periodMs;
  }

  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => {
      const now = new Date();
      for (const connection of this.#connections) connection.heartbeat(now);
    }, this.#periodMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

type ParsedQuery =
  | { ok: true; request: SubscribeRequest }
  | { ok: false; code: 'bad_request' | 'path_not_public'; message: string };

/** The query as a `subscribe` would carry it, checked by the same schema. */
function parseQuery(url: URL, withSince: boolean): ParsedQuery {
  const query = url.searchParams;
  const channel = query.get('channel') ?? '';
  // A path may hold commas: each `rest` path comes in a `paths` parameter of its own.
  const paths = idsArePaths(channel);
  const ids = query.getAll(idsField(channel));
  const markets = [
    ...new Set(paths ? ids : ids.flatMap((value) => value.split(',').filter((id) => id !== ''))),
  ];
  const depthText = query.get('depth');
  // A depth's text as the number it names; any other text ("full" too) goes to the schema as sent.
  const depth =
    depthText === null ? undefined : (bookDepths.find((d) => String(d) === depthText) ?? depthText);
  const since = withSince ? (query.get('since') ?? undefined) : undefined;
  const intervalText = query.get('interval');
  // A whole number's text as that number; any other text goes to the schema as sent (and is refused).
  const interval =
    intervalText === null ? undefined : /^\d+$/.test(intervalText) ? Number(intervalText) : intervalText;
  const result = subscribeRequest.safeParse({
    op: 'subscribe',
    channel,
    markets,
    depth,
    ...(interval === undefined ? {} : { interval }),
    // A decimal string as sent: the schema checks it.
    ...(query.has('threshold') ? { threshold: query.get('threshold') } : {}),
    ...(query.has('group') ? { group: query.get('group') } : {}),
    ...(since === undefined ? {} : { since }),
  });
  if (result.success) return { ok: true, request: result.data };
  const issue = result.error.issues[0];
  return {
    ok: false,
    code: issueCode(issue),
    message: `${issue?.path.join('.') || 'query'}: ${issue?.message}`,
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
