/**
 * @module bench/lib/long-soak/upstream-driver
 * What the long soak does to upstream through the simulator's admin API (docs/upstream.md
 * "Operating the simulator"): markets expire and new ones appear, so that the number of active
 * markets stays where it started while the relays keep meeting new ones and letting go of old
 * ones; a market that ended a while ago disappears altogether (so the catalogue does not grow for
 * ever, as it would not upstream); and now and then a burst of faults (500s, 429s, malformed
 * answers, added latency). The observed markets are never expired.
 */

export interface DriverOptions {
  simUrl: string;
  /** Markets never expired by the driver (the observers' ones). */
  kept: ReadonlySet<string>;
  /** One market expires and one appears this often. */
  turnoverMs: number;
  /** An ended market is deleted this long after the driver first saw it ended. */
  deleteAfterMs: number;
}

export interface DriverCounts {
  expired: number;
  added: number;
  deleted: number;
  /** Admin or catalogue requests that failed (the run goes on). */
  failures: number;
}

export const FAULT_BURST = { errorRate: 0.3, rateLimitRate: 0.1, malformedRate: 0.1, latencyMs: 200 };
const NO_FAULTS = { errorRate: 0, rateLimitRate: 0, malformedRate: 0, latencyMs: 0 };

async function call(url: string, method: string, body?: unknown): Promise<unknown> {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status}`);
  return response.json();
}

interface ListedMarket {
  market_id: string;
  expiration_timestamp: string;
}

/** Every market of one status as the catalogue lists it (admin requests never see faults; these can). */
async function listed(simUrl: string, status: 'active' | 'expired' | 'resolved'): Promise<ListedMarket[]> {
  const answer = (await call(
    `${simUrl}/api/markets?statusFilter=${status}&limit=100&sortBy=ending_soon`,
    'GET',
  )) as {
    markets: ListedMarket[];
  };
  return answer.markets;
}

/** The `count` active markets expiring last: those no natural expiry takes during the run. */
export async function longestLivedMarkets(simUrl: string, count: number): Promise<string[]> {
  const active = await listed(simUrl, 'active');
  return active
    .sort((a, b) => Date.parse(b.expiration_timestamp) - Date.parse(a.expiration_timestamp))
    .slice(0, count)
    .map((market) => market.market_id);
}

export function setFaults(simUrl: string, burst: boolean): Promise<unknown> {
  return call(`${simUrl}/_sim/faults`, 'PUT', burst ? FAULT_BURST : NO_FAULTS);
}

export class MarketTurnover {
  readonly #options: DriverOptions;
  readonly counts: DriverCounts = { expired: 0, added: 0, deleted: 0, failures: 0 };
  readonly #endedSince = new Map<string, number>();
  #activeTarget = 0;
  #timer: NodeJS.Timeout | undefined;
  #turning: Promise<void> = Promise.resolve();

  constructor(options: DriverOptions) {
    this.#options = options;
  }

  async start(): Promise<void> {
    this.#activeTarget = (await listed(this.#options.simUrl, 'active')).length;
    this.#timer = setInterval(() => {
      this.#turning = this.#turn().catch(() => {
        this.counts.failures += 1;
      });
    }, this.#options.turnoverMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#turning;
  }

  /** One expires (the soonest ending that is not kept); as many appear as keep the active count. */
  async #turn(): Promise<void> {
    const { simUrl, kept, deleteAfterMs } = this.#options;
    const active = await listed(simUrl, 'active');
    const victim = active.find((market) => !kept.has(market.market_id));
    if (victim !== undefined) {
      await call(`${simUrl}/_sim/markets/${victim.market_id}`, 'PUT', { status: 'EXPIRED' });
      this.counts.expired += 1;
    }
    const missing = this.#activeTarget - (active.length - (victim === undefined ? 0 : 1));
    for (let added = 0; added < missing; added += 1) {
      await call(`${simUrl}/_sim/markets`, 'POST');
      this.counts.added += 1;
    }
    const now = Date.now();
    const ended = [...(await listed(simUrl, 'expired')), ...(await listed(simUrl, 'resolved'))];
    for (const market of ended) {
      const since = this.#endedSince.get(market.market_id);
      if (since === undefined) this.#endedSince.set(market.market_id, now);
      else if (now - since >= deleteAfterMs) {
        await call(`${simUrl}/_sim/markets/${market.market_id}`, 'DELETE');
        this.#endedSince.delete(market.market_id);
        this.counts.deleted += 1;
      }
    }
  }
}
