/**
 * @module relay/channels/price/price-batch-target
 * Up to 100 markets' prices as one poll target: one batch request (upstream's limit) answers all
 * of them. Each market keeps its own confirmation, because a batch may answer for some markets and
 * not others (a market it leaves out does not exist upstream). A changed price also hints that the
 * market's book moved.
 */

import type { PriceData, PriceUpdateData } from '../../../../packages/protocol/src/protocol/messages.ts';
import { publicReason } from '../../../upstream/errors.ts';
import type { ClobPriceSnapshot } from '../../../upstream/schemas.ts';
import { priceTargetKey } from '../../coordination/redis/keys.ts';
import type { ChangeHere, PolledState, StreamNumbering } from '../../coordination/stream-numbering.ts';
import type { PollOutcome } from '../../poll/outcomes.ts';
import { type Confirmation, type PollContext, PollTarget, pollTimes } from '../../poll/poll-target.ts';
import type { TargetTiming } from '../../poll/scheduler.ts';
import { priceDataOf, priceNumbering } from './codec.ts';

/** One market with a price stream. */
export interface PriceMarket extends Confirmation {
  /** Asked for at least once (a market new to a batch makes the batch ask at once). */
  asked: boolean;
  appliedAskedAt: number;
  /** The market's price stream, numbered by this relay alone or once for the cluster. */
  numbering: StreamNumbering<PriceData, PriceUpdateData>;
  /** The catalogue's loads begun when the stream began: only later ones may say it is not listed. */
  catalogueLoads: number;
}

export function newPriceMarket(
  now: number,
  numbering: StreamNumbering<PriceData, PriceUpdateData>,
  catalogueLoads: number,
): PriceMarket {
  return {
    numbering,
    catalogueLoads,
    addedAt: now,
    confirmedAt: undefined,
    lastError: undefined,
    meanAskGapMs: undefined,
    awaitingSince: undefined,
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

  protected async pollOnce(): Promise<readonly PollOutcome[]> {
    const { cluster, now } = this.context;
    const { source } = this;
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
    this.sentNothing = batch.length === 0;
    if (this.sentNothing || this.removed) return [];
    this.#markAwaiting(batch, askedAt);
    try {
      const response = await source.clobPrices(batch);
      const receivedAt = now();
      const answered = new Set<string>();
      const writes: Promise<PollOutcome | undefined>[] = [];
      for (const entry of response.data) {
        const market = entry.market_id.toLowerCase();
        const health = this.#health.get(market);
        if (health === undefined) continue;
        // An entry without prices may be upstream's answer for an id that is no market: the
        // catalogue tells a market without price data from an id that names nothing, once a list
        // read after the stream began says so. Until then such an entry is answered but gives no
        // first state (a stream with one was priced before: a market).
        // An entry with prices is a market's, whatever the catalogue says.
        const bare = hasPrices(entry)
          ? undefined
          : this.context.existence.bareEntry(market, health.catalogueLoads);
        if (bare === 'no_market') continue;
        answered.add(market);
        if (bare === 'undecided' && !this.#hasState(market)) {
          this.confirmPrice(market, askedAt, false);
          continue;
        }
        const written = this.applyPrice(market, entry, askedAt, receivedAt);
        if (written !== undefined) writes.push(written);
      }
      const outcomes = (await Promise.all(writes)).filter((hint) => hint !== undefined);
      this.confirmed(askedAt, undefined);
      this.emitPoll('price', batch.length, 'ok', askedAt);
      // A market the batch does not answer for does not exist upstream (docs/upstream.md: one
      // entry per requested market).
      for (const market of batch) {
        const health = this.#health.get(market);
        if (answered.has(market) || health === undefined) continue;
        if (await health.numbering.close()) outcomes.push({ type: 'not_found', kind: 'price', id: market });
      }
      return outcomes;
    } catch (error) {
      const reason = publicReason(error);
      for (const market of batch) {
        const health = this.#health.get(market);
        if (health !== undefined) health.lastError = reason;
      }
      return this.failed('price', batch.length, askedAt, error);
    } finally {
      this.#markAwaiting(batch, undefined);
    }
  }

  #hasState(market: string): boolean {
    return [...this.context.registry.streamsOf('price', market)].some((stream) => stream.hasState);
  }

  /** The markets of `batch` wait for the request sent at `sentAt` (relay/poll/freshness.ts), or for none. */
  #markAwaiting(batch: readonly string[], sentAt: number | undefined): void {
    for (const market of batch) {
      const health = this.#health.get(market);
      if (health !== undefined) health.awaitingSince = sentAt;
    }
  }

  /**
   * Applies one market's entry of a batch, in the order the requests were asked, through the
   * market's numbering (in cluster mode numbered for the cluster and written to Redis first): the
   * promise of that, with the hint a changed price gives its book.
   */
  applyPrice(
    market: string,
    entry: ClobPriceSnapshot,
    askedAt: number,
    receivedAt: number,
  ): Promise<PollOutcome | undefined> | undefined {
    const health = this.#health.get(market);
    if (health === undefined || askedAt < health.appliedAskedAt) return undefined;
    const times = pollTimes(entry.timestamp, askedAt, receivedAt);
    const state = priceDataOf(entry);
    const { numbering } = health;
    const polled: PolledState<PriceData, PriceUpdateData> = numbering.keepsWholeState
      ? { whole: state }
      : { here: this.#changes(market, state) };
    return numbering.produce(polled, times).then((applied) => {
      return applied === undefined ? undefined : this.confirmPrice(market, askedAt, applied.changed);
    });
  }

  /**
   * This relay's price stream of `market` (one at most: a price has no depths) with what `state`
   * changes there, made before numbering (the stream's own diff of its channel).
   */
  #changes(market: string, state: PriceData): ChangeHere<PriceData, PriceUpdateData>[] {
    const streams = this.context.registry.streamsOf(priceNumbering.channel, market);
    return Array.from(streams, (stream) => ({ stream, change: stream.changeOf(state) }));
  }

  /**
   * A market's price was confirmed by a request asked at `askedAt` (ours, or the holder's); a
   * changed price hints that the market's book moved.
   */
  confirmPrice(market: string, askedAt: number, changed: boolean): PollOutcome | undefined {
    const health = this.#health.get(market);
    if (health === undefined || askedAt < health.appliedAskedAt) return undefined;
    health.appliedAskedAt = askedAt;
    const now = this.context.now();
    this.context.events.emit('poll:confirmed', {
      kind: 'price',
      ageMs: now - (health.confirmedAt ?? health.addedAt),
    });
    health.confirmedAt = now;
    health.lastError = undefined;
    if (!changed) return undefined;
    return { type: 'book_moved', market, askedAt, movedAt: askedAt - (this.meanAskGapMs ?? 0) / 2 };
  }
}

/** Whether a batch entry has any price (a market without price data has only its id and time). */
function hasPrices(entry: ClobPriceSnapshot): boolean {
  return (
    entry.best_bid !== undefined ||
    entry.best_ask !== undefined ||
    entry.midpoint_price !== undefined ||
    entry.last_price !== undefined ||
    entry.spread !== undefined
  );
}
