/**
 * @module relay/price-batch-target
 * Up to 100 markets' prices as one poll target: one batch request (upstream's limit) answers all
 * of them. Each market keeps its own confirmation, because a batch may answer for some markets and
 * not others (a market it leaves out does not exist upstream). A changed price also hints that the
 * market's book moved.
 */
import type { SharedResult } from '../cluster/shared-result.ts';
import { publicReason } from '../upstream/errors.ts';
import type { ClobPriceSnapshot } from '../upstream/schemas.ts';
import { priceDataOf, withMilliseconds } from './channels.ts';
import type { Confirmation } from './freshness.ts';
import type { TargetTiming } from './poll-scheduler.ts';
import { type PollContext, PollTarget } from './poll-target.ts';

export function priceTargetKey(market: string): string {
  return `price:${market}`;
}

/** One market with a price stream. */
export interface PriceMarket extends Confirmation {
  /** Asked for at least once (a market new to a batch makes the batch ask at once). */
  asked: boolean;
  appliedAskedAt: number;
}

export function newPriceMarket(now: number): PriceMarket {
  return {
    addedAt: now,
    confirmedAt: undefined,
    lastError: undefined,
    meanAskGapMs: undefined,
    asked: false,
    appliedAskedAt: Number.NEGATIVE_INFINITY,
  };
}

export class PriceBatchTarget extends PollTarget {
  readonly kind = 'price';
  /** The markets this batch asks for; the pool reassigns them when price markets come and go. */
  markets: string[] = [];
  readonly #health: ReadonlyMap<string, PriceMarket>;

  constructor(
    index: number,
    timing: TargetTiming,
    context: PollContext,
    health: ReadonlyMap<string, PriceMarket>,
  ) {
    super(`prices:${index}`, timing, context);
    this.#health = health;
  }

  override get awaitingFirstAsk(): boolean {
    return this.markets.some((market) => this.#health.get(market)?.asked === false);
  }

  async poll(): Promise<void> {
    const { cluster, source, now } = this.context;
    const askedAt = this.beginAsk();
    const wanted = [...this.markets];
    for (const market of wanted) {
      const health = this.#health.get(market);
      if (health !== undefined) health.asked = true;
    }
    const claims = await Promise.all(
      wanted.map((market) => cluster.claim(priceTargetKey(market), this.timing.maxAgeMs)),
    );
    const batch = wanted.filter((market, i) => claims[i] && this.#health.has(market));
    if (batch.length === 0 || this.removed) return;
    try {
      const response = await source.clobPrices(batch);
      const receivedAt = now();
      const answered = new Set<string>();
      for (const entry of response.data) {
        const market = entry.market_id.toLowerCase();
        if (!this.#health.has(market)) continue;
        answered.add(market);
        this.applyPrice(market, entry, askedAt, receivedAt);
        cluster.share(priceTargetKey(market), () => ({ kind: 'price', receivedAt, entry }));
      }
      this.confirmed(askedAt, undefined);
      this.emitPoll('price', batch.length, 'ok', askedAt);
      // A market the batch does not answer for does not exist upstream (docs/upstream.md).
      for (const market of batch) {
        if (!answered.has(market) && this.#health.has(market)) {
          cluster.share(priceTargetKey(market), () => ({ kind: 'not_found' }));
          this.context.closeMarket('price', market);
        }
      }
    } catch (error) {
      const reason = publicReason(error);
      for (const market of batch) {
        const health = this.#health.get(market);
        if (health !== undefined) health.lastError = reason;
      }
      this.failed('price', batch.length, askedAt, error);
    }
  }

  /** Applies one market's entry of a batch (ours or shared), in the order the requests were asked. */
  applyPrice(market: string, entry: ClobPriceSnapshot, askedAt: number, receivedAt: number): void {
    const health = this.#health.get(market);
    const [stream] = this.context.registry.streamsOf('price', market);
    if (health === undefined || stream === undefined || askedAt < health.appliedAskedAt) return;
    health.appliedAskedAt = askedAt;
    const rts = new Date(receivedAt).toISOString();
    const changed = this.context.publisher.publish(
      stream,
      priceDataOf(entry),
      withMilliseconds(entry.timestamp),
      rts,
      receivedAt,
    );
    if (changed) this.context.hintBook(market, askedAt, askedAt - (this.meanAskGapMs ?? 0) / 2);
    const now = this.context.now();
    this.context.events.emit('poll:confirmed', {
      kind: 'price',
      ageMs: now - (health.confirmedAt ?? health.addedAt),
    });
    health.confirmedAt = now;
    health.lastError = undefined;
  }
}

/** A result shared for one price market, applied through whichever batch holds it now. */
export function applySharedPrice(
  result: SharedResult,
  market: string,
  batch: PriceBatchTarget | undefined,
  closeMarket: () => void,
): void {
  if (result.kind === 'not_found') closeMarket();
  else if (result.kind === 'price' && result.entry.market_id.toLowerCase() === market)
    batch?.applyPrice(market, result.entry, result.receivedAt, result.receivedAt);
}
