/**
 * @module bench/children/generator
 * The load generator, in its own process so that it never shares the server's event loop: opens N
 * WebSocket (or socket.io) clients, subscribes them, and counts what arrives: messages, bytes,
 * snapshot/update split and latency from each frame's `rts`. Frames are not parsed (lib/frame-counts
 * reads their first bytes), so the generator spends as little CPU per message as a client can; only
 * each relay group's first client decodes and checks every frame (lib/frame-sample).
 */
import { type Socket as IoSocket, io } from 'socket.io-client';
import { WebSocket } from 'ws';
import { COMPACT_SUBPROTOCOL } from '../../packages/protocol/src/protocol/compact.ts';
import { MAX_MARKETS_PER_REQUEST } from '../../packages/protocol/src/protocol/limits.ts';
import { countFrame, emptyCounts, type GroupCounts } from '../lib/frame-counts.ts';
import { FrameSample } from '../lib/frame-sample.ts';
import { serveIpc } from '../lib/ipc.ts';
import { LatencyRecorder } from '../lib/latency.ts';
import { sampleUsage, type UsageSample, usageBetween } from '../lib/usage.ts';

/**
 * `fastify` is bare sockets on the relay's HTTP stack (scenario 3's diagnostic row); `floor` is a
 * `ws` server writing one prebuilt frame per delivery and `uws` uWebSockets.js's own pub/sub (the
 * fan-out scenarios' anchors).
 */
export type ServerKind = 'relay' | 'ws' | 'socketio' | 'fastify' | 'floor' | 'uws';

/** A set of clients that subscribe alike. */
export interface ClientGroup {
  label: string;
  count: number;
  /** relay: what each client subscribes to. */
  channel?: 'book' | 'price' | 'rest';
  depth?: number | null;
  /**
   * relay: client i takes markets[i % n] ('one-each'), every market ('all'), or `perClient`
   * markets from markets[i % n] on ('window').
   */
  assign?: 'one-each' | 'all' | 'window';
  perClient?: number;
  markets?: string[];
  /** relay, `rest` channel: upstream paths, assigned to clients as `markets` are. */
  paths?: string[];
  /** baselines: client i joins topics (i + k) % topics for k < topicsPerClient (default 1). */
  topics?: number;
  topicsPerClient?: number;
  /** relay: offer permessage-deflate and compress every request, as browsers do. */
  deflate?: boolean;
  /** relay: offer the `market-relay.compact.1` subprotocol (docs/protocol.md "Compact encoding"). */
  compact?: boolean;
  /** relay: per-subscription options sent on every subscribe (docs/protocol.md "Per-subscription options"). */
  interval?: number;
  threshold?: string;
}

export type { GroupCounts };

/** `count` items from items[index % n] on, wrapping: each item is picked equally often. */
export function windowOf<T>(items: readonly T[], index: number, count: number): T[] {
  return Array.from({ length: Math.min(count, items.length) }, (_, k) => items[(index + k) % items.length]!);
}

export interface ConnectRequest {
  kind: ServerKind;
  url: string;
  groups: ClientGroup[];
  /** Connections opening at once. */
  concurrency?: number;
}

interface Client {
  group: GroupCounts;
  /** Stream messages received since connecting (not reset by windows). */
  received: number;
  /** The socket's bytesRead when the window started. */
  readAtReset: number;
  bytesRead(): number;
  resubscribe(): void;
  close(): void;
}

const clients: Client[] = [];
const groups = new Map<string, GroupCounts>();
const latency = new LatencyRecorder();
let windowStart: UsageSample = sampleUsage();
let errors = 0;

function baselineTopics(group: ClientGroup, index: number): number[] {
  const topics = Array.from({ length: group.topics ?? 1 }, (_, topic) => topic);
  return windowOf(topics, index, group.topicsPerClient ?? 1);
}

function subscribeFrames(group: ClientGroup, index: number): string[] {
  const channel = group.channel ?? 'book';
  // A `rest` subscribe names its streams in `paths`, every other channel in `markets`.
  const [field, streams] =
    channel === 'rest' ? ['paths', group.paths ?? []] : ['markets', group.markets ?? []];
  const chosen =
    group.assign === 'all'
      ? streams
      : windowOf(streams, index, group.assign === 'window' ? (group.perClient ?? 1) : 1);
  const frames: string[] = [];
  // One request carries at most MAX_MARKETS_PER_REQUEST streams.
  for (let start = 0; start < chosen.length; start += MAX_MARKETS_PER_REQUEST) {
    const request: Record<string, unknown> = {
      op: 'subscribe',
      id: frames.length + 1,
      channel,
      [field]: chosen.slice(start, start + MAX_MARKETS_PER_REQUEST),
    };
    if (channel === 'book') request.depth = group.depth ?? null;
    if (group.interval !== undefined) request.interval = group.interval;
    if (group.threshold !== undefined) request.threshold = group.threshold;
    frames.push(JSON.stringify(request));
  }
  return frames;
}

function openWs(
  kind: ServerKind,
  url: string,
  group: ClientGroup,
  counts: GroupCounts,
  index: number,
): Promise<Client> {
  const target = kind === 'relay' ? url : `${url}?topics=${baselineTopics(group, index).join(',')}`;
  // ws compresses only messages of 1 KB and more by default; a browser compresses every one, so
  // that the relay holds an inflate context for each such client, as it would for a browser.
  const ws = new WebSocket(target, group.compact === true ? [COMPACT_SUBPROTOCOL] : [], {
    perMessageDeflate: group.deflate === true ? { threshold: 0 } : false,
  });
  const sample = kind === 'relay' && index === 0 ? new FrameSample(counts) : undefined;
  const frames = kind === 'relay' ? subscribeFrames(group, index) : [];
  let socket: { bytesRead: number } | undefined;
  ws.once('upgrade', (response) => {
    socket = response.socket;
  });
  const client: Client = {
    group: counts,
    received: 0,
    readAtReset: 0,
    bytesRead: () => socket?.bytesRead ?? 0,
    resubscribe: () => {
      for (const frame of frames) ws.send(frame);
    },
    close: () => ws.terminate(),
  };
  ws.on('message', (data: Buffer) => {
    if (countFrame(client.group, data, latency)) client.received += 1;
    sample?.read(data);
  });
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      if (group.compact === true && ws.protocol === COMPACT_SUBPROTOCOL) counts.negotiated += 1;
      client.resubscribe();
      resolve(client);
    });
    ws.once('error', (error) => {
      errors += 1;
      reject(error);
    });
  });
}

interface IoMessage {
  seq: number;
  rts: string;
}

function openIo(url: string, group: ClientGroup, counts: GroupCounts, index: number): Promise<Client> {
  const socket: IoSocket = io(url, {
    transports: ['websocket'],
    forceNew: true,
    reconnection: false,
    query: { topics: baselineTopics(group, index).join(',') },
  });
  const client: Client = {
    group: counts,
    received: 0,
    readAtReset: 0,
    bytesRead: () => 0,
    resubscribe: () => undefined,
    close: () => socket.disconnect(),
  };
  socket.on('m', (message: IoMessage) => {
    client.received += 1;
    counts.messages += 1;
    if (message.seq === 0) {
      counts.snapshots += 1;
      return;
    }
    counts.updates += 1;
    latency.record(Date.parse(message.rts));
  });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(client));
    socket.once('connect_error', (error) => {
      errors += 1;
      reject(error);
    });
  });
}

async function connect(request: ConnectRequest): Promise<{ connected: number; errors: number }> {
  const jobs: (() => Promise<Client>)[] = [];
  for (const group of request.groups) {
    const counts = emptyCounts(group.count);
    groups.set(group.label, counts);
    for (let i = 0; i < group.count; i++) {
      jobs.push(() =>
        request.kind === 'socketio'
          ? openIo(request.url, group, counts, i)
          : openWs(request.kind, request.url, group, counts, i),
      );
    }
  }
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      try {
        clients.push(await job());
      } catch {
        // Counted in `errors`; the scenario reports how many clients really connected.
      }
    }
  };
  await Promise.all(Array.from({ length: request.concurrency ?? 200 }, worker));
  return { connected: clients.length, errors };
}

/** Resolves when every client has had a stream message (its snapshot), or at the deadline. */
async function awaitFirst(payload: unknown): Promise<{ ready: number; of: number }> {
  const { timeoutMs } = payload as { timeoutMs: number };
  const deadline = Date.now() + timeoutMs;
  const ready = (): number => clients.filter((client) => client.received > 0).length;
  while (ready() < clients.length && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { ready: ready(), of: clients.length };
}

/**
 * Starts a measurement window: counts zeroed in place (clients hold their group's object), except
 * what holds for the connections' whole life (the subprotocol, the sample's checks).
 */
function reset(): void {
  for (const counts of groups.values()) {
    const { negotiated, sampled, sampledCompact, sampleFailures } = counts;
    Object.assign(counts, emptyCounts(counts.clients), {
      negotiated,
      sampled,
      sampledCompact,
      sampleFailures,
    });
  }
  for (const client of clients) client.readAtReset = client.bytesRead();
  latency.reset();
  windowStart = sampleUsage();
}

/**
 * The status quo of scenario 4, measured: `clients` pollers each fetch every market's order book
 * and market data every `pollMs`, as each client of a poll-only API must.
 */
async function pollUpstream(payload: unknown): Promise<{ requests: number; failures: number }> {
  const {
    url,
    clients: pollers,
    markets,
    pollMs,
    durationMs,
  } = payload as {
    url: string;
    clients: number;
    markets: string[];
    pollMs: number;
    durationMs: number;
  };
  const until = Date.now() + durationMs;
  let requests = 0;
  let failures = 0;
  const fetchOne = async (path: string): Promise<void> => {
    requests += 1;
    try {
      const response = await fetch(`${url}${path}`);
      await response.arrayBuffer();
    } catch {
      failures += 1;
    }
  };
  const poller = async (): Promise<void> => {
    while (Date.now() < until) {
      const started = Date.now();
      await Promise.all(
        markets.flatMap((market) => [
          fetchOne(`/clob/orderbook?market_id=${market}`),
          fetchOne(`/api/market-data/${market}`),
        ]),
      );
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + pollMs - Date.now())));
    }
  };
  await Promise.all(Array.from({ length: pollers }, poller));
  return { requests, failures };
}

serveIpc({
  ready: () => ({ pid: process.pid }),
  connect: (payload) => connect(payload as ConnectRequest),
  awaitFirst,
  reset,
  pollUpstream,
  resubscribe: (payload) => {
    const { label } = payload as { label: string };
    const counts = groups.get(label);
    for (const client of clients) if (client.group === counts) client.resubscribe();
  },
  stats: () => {
    for (const client of clients) client.group.socketBytes += client.bytesRead() - client.readAtReset;
    for (const client of clients) client.readAtReset = client.bytesRead();
    return {
      groups: Object.fromEntries(groups),
      latency: latency.summary(),
      usage: usageBetween(windowStart, sampleUsage()),
      memory: process.memoryUsage().rss,
    };
  },
  closeAll: () => {
    for (const client of clients) client.close();
    clients.length = 0;
    groups.clear();
  },
});
