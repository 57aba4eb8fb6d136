/**
 * @module client-endpoints
 * The relay's two client transports, `/v1/ws` and `/v1/sse`, registered on the public app with
 * what they share: one set of per-address and per-key counters at the edge (docs/operations.md
 * "Edge limits"), pruned while the relay runs, one numbering of connections (a connection number
 * names one connection, whatever its transport), and the connection cap they count together.
 */
import type { FastifyInstance } from 'fastify';
import type { RelayTuning } from './config/tuning.ts';
import type { AccessPolicy } from './relay/admission/access.ts';
import { EdgeAdmission } from './relay/admission/edge.ts';
import type { MarketAdmission } from './relay/admission/market.ts';
import type { RelayEvents } from './relay/events.ts';
import type { ReplayService } from './relay/session/replay/replays.ts';
import { SessionIds } from './relay/session/session-ids.ts';
import type { SinceReads } from './relay/session/since-reads.ts';
import type { StreamRegistry } from './relay/streams/registry.ts';
import { registerSseEndpoint, type SseEndpoint } from './sse/endpoint.ts';
import { registerWsEndpoint, type WsEndpoint } from './ws/endpoint.ts';

/** Forgotten per-address connection rates are pruned this often. */
const EDGE_PRUNE_MS = 10_000;

export interface ClientEndpointOptions {
  registry: StreamRegistry;
  marketAdmission: MarketAdmission;
  events: RelayEvents;
  tuning: RelayTuning;
  /** permessage-deflate for WebSocket clients that offer it. */
  compression: boolean;
  access: AccessPolicy;
  /** The history reads of subscriptions with `since` (channels that serve history). */
  sinceReads?: SinceReads;
  /** The replays of the record (WebSocket only: SSE takes no requests). */
  replays?: ReplayService;
}

export interface ClientEndpoints {
  ws: WsEndpoint;
  sse: SseEndpoint;
  /** The edge counters, which also throttle wrong operator keys. */
  edgeAdmission: EdgeAdmission;
  /** Stops pruning the edge counters (on close). */
  stopPruning(): void;
}

export function registerClientEndpoints(
  app: FastifyInstance,
  options: ClientEndpointOptions,
): ClientEndpoints {
  const { registry, marketAdmission, events, tuning, compression, access, sinceReads, replays } = options;
  const history = sinceReads === undefined ? {} : { sinceReads };
  // One set of per-address and per-key counters for both transports (docs/operations.md "Edge limits").
  const edgeAdmission = new EdgeAdmission(tuning.edge);
  const pruneEdge = setInterval(() => edgeAdmission.prune(), EDGE_PRUNE_MS);
  pruneEdge.unref();
  // One numbering for both transports: a connection number names one connection.
  const sessionIds = new SessionIds();
  const ws = registerWsEndpoint(app, {
    registry,
    marketAdmission,
    events,
    limits: tuning.connection,
    coalesceMs: tuning.coalesceMs,
    heartbeatMs: tuning.heartbeatMs,
    maxConnections: tuning.maxConnections,
    maxFrameBytes: tuning.maxFrameBytes,
    compression,
    otherConnections: () => sse.connections.size,
    edge: tuning.edge,
    admission: edgeAdmission,
    sessionIds,
    ...history,
    ...(replays === undefined ? {} : { replays }),
    ...access,
  });
  const sse = registerSseEndpoint(app, {
    registry,
    marketAdmission,
    events,
    limits: tuning.connection,
    heartbeatMs: tuning.heartbeatMs,
    maxConnections: tuning.maxConnections,
    otherConnections: () => ws.connections.size,
    admission: edgeAdmission,
    trustedProxyDepth: tuning.edge.trustedProxyDepth,
    sessionIds,
    ...history,
    ...access,
  });
  return { ws, sse, edgeAdmission, stopPruning: () => clearInterval(pruneEdge) };
}
