/**
 * @module bench/lib/long-soak/clients
 * The long soak's passing crowd: `rate` new clients a second, each from one of many loopback
 * addresses (so the shipped per-address limits apply as to many hosts), living a few seconds and
 * leaving. Most are WebSocket clients with two subscriptions picked from every channel (books at
 * every depth, wildcards `["*"]` on price, trades and market, catalogue, candles, rest paths,
 * oracle feeds), half of them offering compression; some are SSE clients; a few are slow readers
 * that stop reading and linger. The crowd is a fixed number of lanes, each a client after client:
 * the number connected stays steady (a leak is judged on figures that move with it) even when a
 * busy machine delays the arrivals. Counts what happened to them: refusals, errors the relay
 * answered, close codes.
 */
import { request } from 'node:http';
import WebSocket from 'ws';
import { isMarketId } from '../../../packages/protocol/src/protocol/limits.ts';

export interface CrowdOptions {
  /** The relays' HTTP base URLs: clients go to each in turn. */
  relays: string[];
  simUrl: string;
  /** New clients per second, all relays together, while the machine keeps pace. */
  rate: number;
  /** Loopback source addresses `127.<block>.0.1` upwards. */
  addressBlock: number;
  addresses: number;
}

export interface CrowdReport {
  started: Record<string, number>;
  opened: number;
  /** HTTP answers instead of an upgrade or an event stream (429, 503), by status. */
  refused: Record<string, number>;
  /** Protocol errors the relay answered, by channel and code. */
  errors: Record<string, number>;
  /** Closes the relay decided (the client had not asked), by code. */
  closedByRelay: Record<string, number>;
  /** Sockets that failed (reset, refused) before or after opening. */
  socketErrors: number;
  /** Clients alive now. */
  alive: number;
  /** New clients per second since the start (below `rate` when the machine could not keep pace). */
  arrivalsPerSecond: number;
}

/** An ordinary client's life: 5 to 15 s; a slow reader's: 20 to 40 s. */
const LIFETIME_MS = [5_000, 15_000] as const;
const SLOW_READER_LIFETIME_MS = [20_000, 40_000] as const;
/** After a refusal or a failed connection, a lane waits this long before its next client. */
const LANE_BACKOFF_MS = 1_000;

interface Catalogue {
  markets: string[];
  feeds: string[];
}

const count = (record: Record<string, number>, key: string | number) => {
  record[key] = (record[key] ?? 0) + 1;
};
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;
const pickSome = <T>(items: readonly T[], most: number): T[] =>
  [...items].sort(() => Math.random() - 0.5).slice(0, 1 + Math.floor(Math.random() * most));
const between = (low: number, high: number) => low + Math.random() * (high - low);

/** Subscriptions across every channel; each WebSocket client takes two of them. */
function randomSubscription(catalogue: Catalogue): Record<string, unknown> {
  const { markets, feeds } = catalogue;
  const market = pick(markets);
  const kinds: (() => Record<string, unknown>)[] = [
    () => ({ channel: 'book', markets: pickSome(markets, 3), depth: pick([1, 5, 10, 25, 'full']) }),
    () => ({ channel: 'price', markets: pickSome(markets, 5) }),
    () => ({ channel: 'price', markets: ['*'] }),
    () => ({ channel: 'trades', markets: Math.random() < 0.5 ? ['*'] : [market] }),
    () => ({ channel: 'market', markets: Math.random() < 0.5 ? ['*'] : [market] }),
    () => ({ channel: 'orders', markets: [market] }),
    () => ({ channel: 'probabilities', markets: ['all'] }),
    () =>
      feeds.length > 0
        ? { channel: 'oracle', markets: [pick(feeds)] }
        : { channel: 'probabilities', markets: ['all'] },
    () => ({ channel: 'markets', markets: [pick(['active', 'all', 'expired'])] }),
    () => ({
      channel: 'candles',
      markets: [`${market}:${pick(['1m', '5m', '1h'])}:${pick(['probability', 'trades'])}`],
    }),
    () => ({ channel: 'rest', paths: [`/api/markets/${market}/holders?type=${pick(['YES', 'NO'])}`] }),
  ];
  return pick(kinds)();
}

export class Crowd {
  readonly #options: CrowdOptions;
  readonly #report: CrowdReport = {
    started: {},
    opened: 0,
    refused: {},
    errors: {},
    closedByRelay: {},
    socketErrors: 0,
    alive: 0,
    arrivalsPerSecond: 0,
  };
  #catalogue: Catalogue = { markets: [], feeds: [] };
  readonly #feedOf = new Map<string, string>();
  readonly #ending = new Set<() => void>();
  #running = false;
  #startedAt = 0;
  readonly #laneTimers = new Set<NodeJS.Timeout>();
  #catalogueTimer: NodeJS.Timeout | undefined;

  constructor(options: CrowdOptions) {
    this.#options = options;
  }

  /** `rate` x the mean lifetime lanes, started evenly over one mean lifetime. */
  async start(): Promise<void> {
    await this.#readCatalogue();
    this.#catalogueTimer = setInterval(() => void this.#readCatalogue().catch(() => {}), 5_000);
    this.#running = true;
    this.#startedAt = performance.now();
    const meanLifetimeMs = (LIFETIME_MS[0] + LIFETIME_MS[1]) / 2;
    const lanes = Math.round((this.#options.rate * meanLifetimeMs) / 1000);
    for (let lane = 0; lane < lanes; lane += 1) this.#later(lane, (lane / lanes) * meanLifetimeMs);
  }

  report(): CrowdReport {
    const started = Object.values(this.#report.started).reduce((sum, value) => sum + value, 0);
    const seconds = (performance.now() - this.#startedAt) / 1000;
    return { ...structuredClone(this.#report), arrivalsPerSecond: started / seconds };
  }

  /** No more arrivals; every client still there leaves now. */
  stop(): CrowdReport {
    this.#running = false;
    clearInterval(this.#catalogueTimer);
    for (const timer of this.#laneTimers) clearTimeout(timer);
    for (const end of [...this.#ending]) end();
    return this.report();
  }

  #later(lane: number, ms: number): void {
    const timer = setTimeout(() => {
      this.#laneTimers.delete(timer);
      this.#arrive(lane);
    }, ms);
    this.#laneTimers.add(timer);
  }

  /**
   * The active markets (as upstream lists them now) and their oracle feeds. Read from the simulator
   * as upstream answers, so a fault burst can answer a body that breaks the schema: only ids that
   * look like market ids are kept (a crowd subscribing with garbage would count the relay's right
   * `bad_request`s as errors).
   */
  async #readCatalogue(): Promise<void> {
    const answer = (await (
      await fetch(`${this.#options.simUrl}/api/markets?statusFilter=active&limit=100`)
    ).json()) as { markets?: { market_id?: unknown }[] };
    if (!Array.isArray(answer.markets)) return;
    const markets = answer.markets
      .map((market) => market?.market_id)
      .filter((id): id is string => typeof id === 'string' && isMarketId(id));
    for (const market of markets.filter((id) => !this.#feedOf.has(id)).slice(0, 10)) {
      const detail = (await (await fetch(`${this.#options.simUrl}/api/markets/${market}`)).json()) as {
        market?: { oracle_feed_id?: string };
      };
      const feed = detail.market?.oracle_feed_id;
      if (feed !== undefined && /^0x[0-9a-f]+$/i.test(feed)) this.#feedOf.set(market, feed);
    }
    if (markets.length > 0) {
      this.#catalogue = {
        markets,
        feeds: markets.flatMap((market) => this.#feedOf.get(market) ?? []),
      };
    }
  }

  /** Lane `lane`'s next client: of the lane's kind, to the lane's relay, from the lane's address. */
  #arrive(lane: number): void {
    if (!this.#running) return;
    if (this.#catalogue.markets.length === 0) {
      this.#later(lane, LANE_BACKOFF_MS);
      return;
    }
    const relay = this.#options.relays[lane % this.#options.relays.length]!;
    const address = lane % this.#options.addresses;
    const localAddress = `127.${this.#options.addressBlock}.${Math.floor(address / 250)}.${(address % 250) + 1}`;
    // The lane goes on when its client leaves: at once after a full life, a moment later after a failure.
    const next = (failed: boolean) => this.#later(lane, failed ? LANE_BACKOFF_MS : 0);
    const kind = lane % 100;
    if (kind < 3)
      this.#webSocketClient(relay, localAddress, 'slow reader', between(...SLOW_READER_LIFETIME_MS), next);
    else if (kind < 13) this.#sseClient(relay, localAddress, between(...LIFETIME_MS), next);
    else
      this.#webSocketClient(relay, localAddress, 'websocket', between(...LIFETIME_MS), next, kind % 2 === 0);
  }

  /** Registers how a client leaves (at its time or on stop); returns the call that ends it early. */
  #lifetime(leave: () => void, ms: number, next: (failed: boolean) => void): (failed?: boolean) => void {
    this.#report.alive += 1;
    let gone = false;
    const end = (failed = false) => {
      if (gone) return;
      gone = true;
      clearTimeout(timer);
      this.#ending.delete(end);
      this.#report.alive -= 1;
      leave();
      next(failed);
    };
    const timer = setTimeout(end, ms);
    this.#ending.add(end);
    return end;
  }

  #webSocketClient(
    relay: string,
    localAddress: string,
    kind: 'websocket' | 'slow reader',
    lifetimeMs: number,
    next: (failed: boolean) => void,
    compression = true,
  ): void {
    count(this.#report.started, kind);
    const ws = new WebSocket(`${relay.replace(/^http/, 'ws')}/v1/ws`, {
      localAddress,
      perMessageDeflate: compression,
    });
    let leaving = false;
    const end = this.#lifetime(
      () => {
        leaving = true;
        if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
        else if (ws.readyState === WebSocket.OPEN) {
          ws.resume();
          ws.close(1000);
        }
      },
      lifetimeMs,
      next,
    );
    ws.on('error', () => {
      if (!leaving) this.#report.socketErrors += 1;
      end(true);
    });
    ws.on('unexpected-response', (clientRequest, response) => {
      count(this.#report.refused, response.statusCode ?? 0);
      clientRequest.destroy();
      end(true);
    });
    ws.on('close', (code) => {
      if (!leaving) count(this.#report.closedByRelay, code);
      end(!leaving);
    });
    const channels: string[] = [];
    ws.on('message', (data: Buffer) => {
      // Only errors are read: parsing every snapshot would make the crowd, not the relay, the bottleneck.
      if (!data.includes('"type":"error"')) return;
      const message = JSON.parse(data.toString()) as {
        type?: string;
        code?: string;
        id?: number;
        channel?: string;
      };
      if (message.type !== 'error') return;
      const channel = message.channel ?? (typeof message.id === 'number' ? channels[message.id] : undefined);
      count(this.#report.errors, `${channel ?? 'connection'} ${message.code ?? 'unknown'}`);
    });
    ws.on('open', () => {
      this.#report.opened += 1;
      if (kind === 'slow reader') {
        ws.send(
          JSON.stringify({ op: 'subscribe', channel: 'book', markets: this.#catalogue.markets.slice(0, 10) }),
        );
        ws.send(JSON.stringify({ op: 'subscribe', channel: 'price', markets: ['*'] }));
        ws.pause();
        return;
      }
      for (const [id, subscription] of [
        randomSubscription(this.#catalogue),
        randomSubscription(this.#catalogue),
      ].entries()) {
        channels[id] = String(subscription.channel);
        ws.send(JSON.stringify({ op: 'subscribe', id, ...subscription }));
      }
    });
  }

  #sseClient(relay: string, localAddress: string, lifetimeMs: number, next: (failed: boolean) => void): void {
    count(this.#report.started, 'sse');
    const { markets } = this.#catalogue;
    const query = pick([
      `channel=book&markets=${pickSome(markets, 3).join(',')}&depth=${pick(['1', '10', 'full'])}`,
      `channel=price&markets=${pickSome(markets, 5).join(',')}`,
      'channel=price&markets=*',
      'channel=trades&markets=*',
      `channel=orders&markets=${pick(markets)}`,
    ]);
    const { hostname, port } = new URL(relay);
    const sse = request({
      host: hostname,
      port,
      path: `/v1/sse?${query}`,
      localAddress,
      headers: { accept: 'text/event-stream' },
    });
    let leaving = false;
    const end = this.#lifetime(
      () => {
        leaving = true;
        sse.destroy();
      },
      lifetimeMs,
      next,
    );
    sse.on('error', () => {
      if (!leaving) this.#report.socketErrors += 1;
      end(true);
    });
    sse.on('response', (response) => {
      if (response.statusCode !== 200) {
        count(this.#report.refused, response.statusCode ?? 0);
        response.resume();
        end(true);
        return;
      }
      this.#report.opened += 1;
      response.on('data', () => {});
      response.on('error', () => {});
      response.on('end', () => {
        if (!leaving) count(this.#report.closedByRelay, 'sse end');
        end(!leaving);
      });
    });
    sse.end();
  }
}
