/**
 * @module relay/channels/price/target/price-targets
 * The poller pool's price targets: one health record per market with `price` streams, and one
 * price-batch target (relay/channels/price/target/price-batch-target.ts) per 100 of those markets, kept in line with the
 * registry. In cluster mode each market's prices are shared by the relay holding its lease
 * (relay/coordination/redis/broker.ts).
 */
import { priceNumberedCodec } from '../../../coordination/codecs.ts';
import { priceTargetKey } from '../../../coordination/redis/keys.ts';
import { PRICE_BATCH_SIZE } from '../../../poll/budget.ts';
import type { PollDispatcher } from '../../../poll/dispatcher.ts';
import type { TargetTiming } from '../../../poll/scheduler.ts';
import type { StreamRegistry } from '../../../streams/registry.ts';
import type { AnyStream } from '../../../streams/stream.ts';
import type { PollContext } from '../../../targets/poll-target.ts';
import { newPriceMarket, PriceBatchTarget, type PriceMarket } from './price-batch-target.ts';

/** The streams a price batch serves for one of its markets: the market's `price` streams. */
export function priceTargetStreams(registry: StreamRegistry, market: string): Iterable<AnyStream> {
  return registry.streamsOf('price', market);
}

export class PriceTargets {
  /** Whether `channel`'s streams are served by the price batches. */
  static serves(channel: string): boolean {
    return channel === 'price';
  }

  readonly #context: PollContext;
  readonly #dispatcher: PollDispatcher;
  readonly #markets = new Map<string, PriceMarket>();
  readonly #batches: PriceBatchTarget[] = [];

  constructor(context: PollContext, dispatcher: PollDispatcher) {
    this.#context = context;
    this.#dispatcher = dispatcher;
  }

  /** Markets with `price` streams. */
  get marketCount(): number {
    return this.#markets.size;
  }

  /** Price-batch requests, one per 100 markets. */
  get batchCount(): number {
    return this.#batches.length;
  }

  /** Each market with its confirmation. */
  markets(): Iterable<[string, PriceMarket]> {
    return this.#markets.entries();
  }

  batches(): readonly PriceBatchTarget[] {
    return this.#batches;
  }

  /** Mean time between requests per batch, measured; undefined for a batch not asked twice yet. */
  meanAskGaps(): (number | undefined)[] {
    return this.#batches.map((batch) => batch.meanAskGapMs);
  }

  /** Brings the markets and batches in line with the registry; new batches get `timing`. */
  sync(timing: TargetTiming): void {
    const wanted = this.#context.registry.ids('price');
    for (const market of this.#markets.keys()) {
      if (wanted.has(market)) continue;
      this.#markets.delete(market);
      this.#context.cluster.forget(priceTargetKey(market));
    }
    for (const market of wanted.keys()) {
      if (this.#markets.has(market)) continue;
      const numbering = this.#context.cluster.streams(
        priceTargetKey(market),
        market,
        priceNumberedCodec,
        {
          ...this.#context,
          closeMarket: () => this.#context.report({ type: 'not_found', kind: 'price', id: market }),
        },
        (applied) => {
          const hint = this.batchOf(market)?.confirmPrice(market, applied.receivedAt, applied.changed);
          if (hint !== undefined) this.#context.report(hint);
        },
      );
      this.#markets.set(
        market,
        newPriceMarket(this.#context.now(), numbering, this.#context.existence.catalogueLoads()),
      );
    }
    const markets = [...this.#markets.keys()];
    const count = Math.ceil(markets.length / PRICE_BATCH_SIZE);
    while (this.#batches.length > count) this.#drop(this.#batches.pop()!);
    while (this.#batches.length < count) {
      const batch = new PriceBatchTarget(this.#batches.length, timing, this.#context, this.#markets);
      this.#batches.push(batch);
      this.#dispatcher.add(batch);
    }
    this.#batches.forEach((batch, i) => {
      batch.markets = markets.slice(i * PRICE_BATCH_SIZE, (i + 1) * PRICE_BATCH_SIZE);
    });
  }

  /** Every batch asked at `timing` from now on (the interval moved with the budget). */
  retime(timing: TargetTiming): void {
    for (const batch of this.#batches) batch.timing = timing;
  }

  clear(): void {
    for (const market of this.#markets.keys()) this.#context.cluster.forget(priceTargetKey(market));
    this.#markets.clear();
  }

  /** The batch asking for `market`'s prices. */
  batchOf(market: string): PriceBatchTarget | undefined {
    return this.#batches.find((batch) => batch.markets.includes(market));
  }

  #drop(batch: PriceBatchTarget): void {
    batch.removed = true;
    this.#dispatcher.remove(batch.key);
  }
}
