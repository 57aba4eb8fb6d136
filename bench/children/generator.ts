/**
 * @module bench/children/generator
 * The load generator, in its own process so that it never shares the server's event loop: opens N
 * WebSocket (or socket.io) clients, subscribes them, and counts what arrives: messages, bytes,
 * snapshot/update split and latency from each frame's `rts`. Frames are not parsed (the `rts` is
 * found by search), so the generator spends as little CPU per message as a client can.
 */
import { type Socket as IoSocket, io } from 'socket.io-client';
import { WebSocket } from 'ws';
import { MAX_MARKETS_PER_REQUEST } from '../../src/protocol/limits.ts';
import { serveIpc } from '../lib/ipc.ts';
import { LatencyRecorder } from '../lib/latency.ts';
import { sampleUsage, type UsageSample, usageBetween } from '../lib/usage.ts';

/**
 * `fastify` is bare sockets on the relay's HTTP stack (scenario 3's diagnostic row); `floor` is a
 * `ws` server writing one prebuilt frame per delivery (scenario 7's diagnostic row).
 */
export type ServerKind = 'relay' | 'ws' | 'socketio' | 'fastify' | 'floor';

/** A set of clients that subscribe alike. */
export interface ClientGroup {
  label: string;
  count: number;
  /** relay: what each client subscribes to. */
  channel?: 'book' | 'price';
  depth?: number | null;
  /**
   * relay: client i takes markets[i % n] ('one-each'), every market ('all'), or `perClient`
   * markets from markets[i % n] on ('window').
   */
  assign?: 'one-each' | 'all' | 'window';
  perClient?: number;
  markets?: string[];
  /** baselines: client i joins topics (i + k) % topics for k < topicsPerClient (default 1). */
  topics?: number;
  topicsPerClient?: number;
  /** relay: offer permessage-deflate and compress every request, as browsers do. */
  deflate?: boolean;
}

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

export interface GroupCounts {
  clients: number;
  messages: number;
  /** Payload bytes of stream messages (snapshot and update). */
  bytes: number;
  /** Payload plus WebSocket frame header (server frames are unmasked). */
  wireBytes: number;
  snapshots: number;
  snapshotBytes: number;
  updates: number;
  updateBytes: number;
  updateWireBytes: number;
  other: number;
  /** Bytes the clients' sockets read in the window (compressed where deflate was negotiated). */
  socketBytes: number;
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

const RTS = Buffer.from('"rts":"');
const ISO_LENGTH = 24;
/**
 * `{"type":"` is 9 bytes: the next two bytes tell `snapshot` and `update` from every other type
 * (`subscribed`, `status`, `unsubscribed`, ...) without parsing.
 */
const TYPE_AT = 9;
const SNAPSHOT = 'sn';
const UPDATE = 'up';

const clients: Client[] = [];
const groups = new Map<string, GroupCounts>();
const latency = new LatencyRecorder();
let windowStart: UsageSample = sampleUsage();
let errors = 0;

function emptyCounts(clientCount: number): GroupCounts {
  return {
    clients: clientCount,
    messages: 0,
    bytes: 0,
    wireBytes: 0,
    snapshots: 0,
    snapshotBytes: 0,
    updates: 0,
    updateBytes: 0,
    updateWireBytes: 0,
    other: 0,
    socketBytes: 0,
  };
}

function wsHeaderBytes(length: number): number {
  return length < 126 ? 2 : length < 65_536 ? 4 : 10;
}

function countFrame(client: Client, data: Buffer): void {
  const counts = client.group;
  const kind = data.toString('latin1', TYPE_AT, TYPE_AT + 2);
  if (kind !== SNAPSHOT && kind !== UPDATE) {
    counts.other += 1;
    return;
  }
  const wire = data.length + wsHeaderBytes(data.length);
  client.received += 1;
  counts.messages += 1;
  counts.bytes += data.length;
  counts.wireBytes += wire;
  if (kind === SNAPSHOT) {
    counts.snapshots += 1;
    counts.snapshotBytes += data.length;
    return;
  }
  counts.updates += 1;
  counts.updateBytes += data.length;
  counts.updateWireBytes += wire;
  const at = data.indexOf(RTS);
  if (at >= 0) {
    const start = at + RTS.length;
    latency.record(Date.parse(data.toString('latin1', start, start + ISO_LENGTH)));
  }
}

function baselineTopics(group: ClientGroup, index: number): number[] {
  const topics = Array.from({ length: group.topics ?? 1 }, (_, topic) => topic);
  return windowOf(topics, index, group.topicsPerClient ?? 1);
}

function subscribeFrames(group: ClientGroup, index: number): string[] {
  const markets = group.markets ?? [];
  const chosen =
    group.assign === 'all'
      ? markets
      : windowOf(markets, index, group.assign === 'window' ? (group.perClient ?? 1) : 1);
  const frames: string[] = [];
  // One request carries at most MAX_MARKETS_PER_REQUEST markets.
  for (let start = 0; start < chosen.length; start += MAX_MARKETS_PER_REQUEST) {
    const request: Record<string, unknown> = {
      op: 'subscribe',
      id: frames.length + 1,
      channel: group.channel ?? 'book',
      markets: chosen.slice(start, start + MAX_MARKETS_PER_REQUEST),
    };
    if ((group.channel ?? 'book') === 'book') request.depth = group.depth ?? null;
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
  const ws = new WebSocket(target, { perMessageDeflate: group.deflate === true ? { threshold: 0 } : false });
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
  ws.on('message', (data: Buffer) => countFrame(client, data));
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
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

/** Starts a measurement window: counts zeroed in place (clients hold their group's object). */
function reset(): void {
  for (const counts of groups.values()) Object.assign(counts, emptyCounts(counts.clients));
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
