/**
 * @module test/support/cluster/rolling-drain
 * A rolling restart of a cluster whose relays drain (docs/operations.md "Shutdown"), shared by the
 * suite's mechanism test (test/cluster/streams/rolling-drain.test.ts) and its benchmark
 * (`npm run bench -- rolling-restart`). Two kinds of clients: plain WebSocket clients that know
 * nothing of `going_away` and reconnect at once, to the next relay, whenever their socket closes
 * (what a bot on a plain WebSocket library does), and SDK clients, which follow the hint and resume.
 * Every connection that opens is noted with its relay and time, so that what each relay received in
 * any one second can be counted. Each relay in turn is stopped (SIGTERM: a drain), then replaced at
 * the same address, as a deploy does.
 */
import WebSocket from 'ws';
import { type BookSubscription, connect, type RelayClient } from '../../../packages/client/src/node.ts';
import { waitFor } from '../wait-for.ts';

/** The relays of the cluster, by index; each address stays the same through its replacement. */
export interface RollingCluster {
  readonly urls: readonly string[];
  /** Stops relay `index` with SIGTERM and resolves with its exit code once it has exited. */
  stop(index: number): Promise<number | null>;
  /** Starts relay `index` again at its address. */
  replace(index: number): Promise<void>;
}

/** One connection opening on a relay. */
interface Arrival {
  relay: number;
  at: number;
}

/** After an attempt that never opened (a relay refusing or gone), a plain client waits this long. */
const FAILED_ATTEMPT_PAUSE_MS = 100;

/** A client on a plain WebSocket library: one `price` subscription, and on any close straight to the next relay. */
class PlainClient {
  #ws: WebSocket | undefined;
  #stopped = false;
  open = false;

  constructor(
    private readonly urls: readonly string[],
    private relay: number,
    private readonly market: string,
    private readonly arrived: (relay: number) => void,
  ) {}

  start(): void {
    if (this.#stopped) return;
    const relay = this.relay;
    const ws = new WebSocket(`${this.urls[relay]!.replace(/^http/, 'ws')}/v1/ws`);
    this.#ws = ws;
    let opened = false;
    ws.on('open', () => {
      opened = true;
      this.open = true;
      this.arrived(relay);
      ws.send(JSON.stringify({ op: 'subscribe', channel: 'price', markets: [this.market] }));
    });
    // A refused upgrade (503 while draining) or a relay that is gone: `close` follows.
    ws.on('error', () => {});
    ws.on('close', () => {
      this.open = false;
      this.relay = (relay + 1) % this.urls.length;
      if (opened) this.start();
      else setTimeout(() => this.start(), FAILED_ATTEMPT_PAUSE_MS).unref();
    });
  }

  close(): void {
    this.#stopped = true;
    this.#ws?.terminate();
  }
}

/** An SDK client on one book: counts what would betray a gap (a second snapshot, a resync). */
class SdkClient {
  readonly client: RelayClient;
  readonly book: BookSubscription;
  snapshots = 0;
  resyncs = 0;

  constructor(urls: readonly string[], first: number, market: string, arrived: (relay: number) => void) {
    // Its list starts at its own relay, so its next relay is the plain clients' next one.
    const order = urls.map((_, i) => urls[(first + i) % urls.length]!);
    const sockets = order.map((url) => `${url.replace(/^http/, 'ws')}/v1/ws`);
    this.client = connect(order, { encoding: 'json', backoff: { baseMs: 100, maxMs: 2_000 } });
    this.client.on('open', ({ url }) => arrived((first + sockets.indexOf(url)) % urls.length));
    this.book = this.client.subscribeBook(market, { depth: 10 });
    this.book.on('snapshot', () => {
      this.snapshots += 1;
    });
    this.book.on('resync', () => {
      this.resyncs += 1;
    });
  }
}

/** The plain and SDK clients of the cluster, spread over its relays, and every arrival since the start. */
export class ClientFleet {
  readonly plain: PlainClient[] = [];
  readonly sdk: SdkClient[] = [];
  readonly arrivals: Arrival[] = [];

  constructor(private readonly urls: readonly string[]) {}

  /** Adds `plain` and `sdk` clients, relay by relay in turn, `batch` at a time, and waits until they are live. */
  async place(plain: number, sdk: number, markets: readonly string[], batch = 200): Promise<void> {
    const arrived = (relay: number) => this.arrivals.push({ relay, at: Date.now() });
    for (let i = 0; i < plain; i++) {
      const client = new PlainClient(this.urls, i % this.urls.length, markets[i % markets.length]!, arrived);
      this.plain.push(client);
      client.start();
      if ((i + 1) % batch === 0) await this.settled(60_000);
    }
    for (let i = 0; i < sdk; i++) {
      this.sdk.push(new SdkClient(this.urls, i % this.urls.length, markets[i % markets.length]!, arrived));
      if ((i + 1) % batch === 0) await this.settled(60_000);
    }
    await this.settled(60_000);
  }

  /** Waits until every plain client is connected and every SDK client's book is live. */
  async settled(timeoutMs: number): Promise<void> {
    await waitFor(
      'every client connected and every SDK book live',
      () =>
        this.plain.every((client) => client.open) &&
        this.sdk.every((client) => client.client.status === 'open' && client.book.status === 'live'),
      { timeoutMs, everyMs: 50 },
    );
  }

  /** The SDK clients whose book got a snapshot after its first, or resynced: a resume that lost something. */
  get sdkWithGap(): number {
    return this.sdk.filter((client) => client.snapshots > 1 || client.resyncs > 0).length;
  }

  get clients(): number {
    return this.plain.length + this.sdk.length;
  }

  async close(): Promise<void> {
    for (const client of this.plain) client.close();
    await Promise.all(this.sdk.map((client) => client.client.close()));
  }
}

export interface RelayStop {
  relay: number;
  exitCode: number | null;
  /** From SIGTERM to the exit. */
  stopMs: number;
}

export interface RollingFigures {
  stops: RelayStop[];
  /** The most connections each relay received in any one second of the restart (by index). */
  busiestSecondByRelay: number[];
  /** SDK clients that lost continuity (a second snapshot or a resync) through the restart. */
  sdkWithGap: number;
  restartMs: number;
}

/**
 * Restarts each relay in turn (SIGTERM, its exit, a replacement at its address), waiting after each
 * until every client is back and live; then counts.
 */
export async function rollingRestart(
  cluster: RollingCluster,
  fleet: ClientFleet,
  settleTimeoutMs: number,
): Promise<RollingFigures> {
  const startedAt = Date.now();
  const stops: RelayStop[] = [];
  for (let relay = 0; relay < cluster.urls.length; relay++) {
    const sentAt = Date.now();
    const exitCode = await cluster.stop(relay);
    stops.push({ relay, exitCode, stopMs: Date.now() - sentAt });
    await cluster.replace(relay);
    await fleet.settled(settleTimeoutMs);
  }
  const during = fleet.arrivals.filter((arrival) => arrival.at >= startedAt);
  return {
    stops,
    busiestSecondByRelay: cluster.urls.map((_, relay) =>
      busiestSecond(during.filter((arrival) => arrival.relay === relay).map((arrival) => arrival.at)),
    ),
    sdkWithGap: fleet.sdkWithGap,
    restartMs: Date.now() - startedAt,
  };
}

/** The most of `times` (ms) within any one-second window. */
export function busiestSecond(times: readonly number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let start = 0, end = 0; end < sorted.length; end += 1) {
    while (sorted[end]! - sorted[start]! >= 1_000) start += 1;
    most = Math.max(most, end - start + 1);
  }
  return most;
}
