/**
 * @module relay/channels/price/price-targets
 * The poller pool's price targets (a `TargetCollection`, relay/poll/target-collection.ts): one
 * health record per market with `price` streams, and one
 * price-batch target (relay/channels/price/price-batch-target.ts) per 100 of those markets, kept in line with the
 * registry. In cluster mode each market's prices are shared by the relay holding its lease
 * (relay/coordination/redis/broker.ts).
 */

import type { Channel } from '../../../../packages/protocol/src/protocol/messages.ts';
import { priceNumberedCodec } from '../../coordination/codecs.ts';
import { priceTargetKey } from '../../coordination/redis/keys.ts';
import type { PollDispatcher } from '../../poll/dispatcher.ts';
import { type PlannedTargets, type PollPlan, PRICE_BATCH_SIZE } from '../../poll/plan.ts';
import type { ConfirmationVisit, FreshnessView, PollContext } from '../../poll/poll-target.ts';
import type { TargetTiming } from '../../poll/scheduler.ts';
import type { CollectionParts, TargetCollection } from '../../poll/target-collection.ts';
import type { StreamRegistry } from '../../streams/registry.ts';
import type { AnyStream } from '../../streams/stream.ts';
import { newPriceMarket, PriceBatchTarget, type PriceMarket } from './price-batch-target.ts';

/** The streams a price batch serves for one of its markets: the market's `price` streams. */
export function priceTargetStreams(registry: StreamRegistry, market: string): Iterable<AnyStream> {
  return registry.streamsOf('price', market);
}

export class PriceTargets implements TargetCollection<PriceBatchTarget> {
  readonly channels: readonly Channel[] = ['price'];
  readonly kind = 'price';
  /** Freshness judges each market's health, not the batches: the collection answers for them itself. */
  readonly judged: FreshnessView = this;
  readonly #context: PollContext;
  readonly #dispatcher: PollDispatcher;
  readonly #plan: PollPlan;
  readonly #markets = new Map<string, PriceMarket>();
  readonly #batches: PriceBatchTarget[] = [];
  readonly #batchOf = new Map<string, PriceBatchTarget>();
  /**
   * The timing every batch shares, one object: a new plan retimes them all by changing it, without
   * a walk over the batches each time a market comes or goes.
   */
  readonly #timing: TargetTiming;

  constructor({ context, dispatcher, plan }: CollectionParts) {
    this.#context = context;
    this.#dispatcher = dispatcher;
    this.#plan = plan;
    this.#timing = { ...plan.priceTiming() };
  }

  /** Markets with `price` streams. */
  get size(): number {
    return this.#markets.size;
  }

  follow(_channel: Channel, market: string): readonly PriceBatchTarget[] {
    return this.syncOne(market);
  }

  /** Every batch cut again: each one's holders are made again. */
  syncAll(): readonly PriceBatchTarget[] {
    this.sync();
    return this.#batches;
  }

  targetOf(_channel: Channel, market: string): PriceBatchTarget | undefined {
    return this.#batchOf.get(market);
  }

  streamsOf(batch: PriceBatchTarget): Iterable<AnyStream> {
    const { registry } = this.#context;
    return batch.markets.flatMap((market) => [...priceTargetStreams(registry, market)]);
  }

  count(into: PlannedTargets): void {
    into.priceMarkets += this.#markets.size;
    into.priceBatches += this.#batches.length;
  }

  targetCount(): number {
    return this.#markets.size;
  }

  replanned(): void {
    this.retime(this.#plan.priceTiming());
  }

  /**
   * Each market's health, judged against the interval prices are asked at and the maximum age
   * every stream promises.
   */
  visit(visit: ConfirmationVisit): void {
    const timing = { ...this.#plan.priceTiming(), maxAgeMs: this.#plan.maxAgeMs };
    const { registry } = this.#context;
    for (const [market, health] of this.#markets)
      visit(health, timing, () => priceTargetStreams(registry, market));
  }

  askGaps(): Iterable<number | undefined> {
    return this.#batches.map((batch) => batch.meanAskGapMs);
  }

  /**
   * Brings the markets and batches in line with the registry, every batch cut again from the
   * markets in the order they came. Walks them all.
   */
  sync(): void {
    const wanted = this.#context.registry.ids('price');
    for (const market of [...this.#markets.keys()]) if (!wanted.has(market)) this.#forget(market);
    for (const market of wanted.keys()) if (!this.#markets.has(market)) this.#addMarket(market);
    const markets = [...this.#markets.keys()];
    const count = Math.ceil(markets.length / PRICE_BATCH_SIZE);
    while (this.#batches.length > count) this.#drop(this.#batches.pop()!);
    while (this.#batches.length < count) this.#newBatch();
    this.#batchOf.clear();
    this.#batches.forEach((batch, i) => {
      batch.markets = markets.slice(i * PRICE_BATCH_SIZE, (i + 1) * PRICE_BATCH_SIZE);
      for (const market of batch.markets) this.#batchOf.set(market, batch);
    });
  }

  /**
   * The one market whose `price` streams came or went. A new one joins the last batch while it
   * has room, else starts one; one that goes leaves its place to the last batch's last market, so
   * every batch but the last stays full and no other batch is cut again. The batches whose
   * markets changed (none: nothing did).
   */
  syncOne(market: string): PriceBatchTarget[] {
    const wanted = this.#context.registry.streamsOf('price', market).size > 0;
    const known = this.#markets.has(market);
    if (wanted && !known) return [this.#join(market)];
    if (!wanted && known) return this.#leave(market);
    return [];
  }

  /** Every batch asked at `timing` from now on (the interval moved with the budget). */
  retime(timing: TargetTiming): void {
    Object.assign(this.#timing, timing);
  }

  clear(): void {
    for (const market of this.#markets.keys()) this.#context.cluster.forget(priceTargetKey(market));
    this.#markets.clear();
    this.#batchOf.clear();
  }

  #addMarket(market: string): void {
    const numbering = this.#context.cluster.streams(
      priceTargetKey(market),
      market,
      priceNumberedCodec,
      {
        ...this.#context,
        closeMarket: () => this.#context.report({ type: 'not_found', kind: 'price', id: market }),
      },
      (applied) => {
        const hint = this.#batchOf.get(market)?.confirmPrice(market, applied.receivedAt, applied.changed);
        if (hint !== undefined) this.#context.report(hint);
      },
    );
    this.#markets.set(
      market,
      newPriceMarket(this.#context.now(), numbering, this.#context.existence.catalogueLoads()),
    );
  }

  #forget(market: string): void {
    this.#markets.delete(market);
    this.#context.cluster.forget(priceTargetKey(market));
  }

  #newBatch(): PriceBatchTarget {
    const batch = new PriceBatchTarget(this.#batches.length, this.#timing, this.#context, this.#markets);
    this.#batches.push(batch);
    this.#dispatcher.add(batch);
    return batch;
  }

  /** A new market in the last batch, or in a batch of its own when the last is full. */
  #join(market: string): PriceBatchTarget {
    this.#addMarket(market);
    const last = this.#batches.at(-1);
    const batch = last === undefined || last.markets.length >= PRICE_BATCH_SIZE ? this.#newBatch() : last;
    batch.markets.push(market);
    this.#batchOf.set(market, batch);
    return batch;
  }

  /** A market gone: the last batch's last market takes its place; an empty last batch is dropped. */
  #leave(market: string): PriceBatchTarget[] {
    this.#forget(market);
    const batch = this.#batchOf.get(market);
    this.#batchOf.delete(market);
    const last = this.#batches.at(-1);
    if (batch === undefined || last === undefined) return [];
    const filler = last.markets.pop()!;
    if (filler !== market) {
      batch.markets[batch.markets.indexOf(market)] = filler;
      this.#batchOf.set(filler, batch);
    }
    if (last.markets.length === 0) this.#drop(this.#batches.pop()!);
    return [...new Set([batch, last])].filter((changed) => !changed.removed);
  }

  #drop(batch: PriceBatchTarget): void {
    batch.removed = true;
    this.#dispatcher.remove(batch.key);
  }
}
