/**
 * @module relay/targets/trades-target
 * One market's trade prints as a poll target (docs/protocol.md "`trades` data"): a poll walks
 * upstream's newest-first activity pages down to the first entry its stream already delivered
 * (channels/trades/relay-activity.ts) and publishes what is new, oldest first. Pages after the first are extra
 * requests inside the upstream client's rate limit, needed only when more than a page of trades
 * happened between two polls. In cluster mode only the lease holder asks upstream; it shares the
 * new entries with the most recent ones, and the others deliver what their own stream has not.
 */

import { z } from 'zod';
import {
  sharedWindow,
  TradeHistory,
  tradesStates,
  walkActivity,
} from '../../channels/trades/relay-activity.ts';
import { activityPages } from '../../channels/trades/relay-activity-pages.ts';
import type { TradeEntry, TradesData } from '../../protocol/messages.ts';
import { marketActivityEntry } from '../../upstream/schemas.ts';
import { streamTargetKey } from '../../util/keys.ts';
import type { SharedResult } from '../coordination/shared-result.ts';
import type { TargetTiming } from '../poll/scheduler.ts';
import type { StreamOf } from '../streams/stream.ts';
import type { PollOutcome } from './outcomes.ts';
import { type PollContext, PollTarget } from './poll-target.ts';

/** What the lease holder shares after a poll, validated again on arrival. */
const sharedTrades = z.object({ trades: z.array(marketActivityEntry) });

type TradesStream = StreamOf<'trades'>;

export class TradesTarget extends PollTarget {
  readonly kind = 'trades';
  readonly channel = 'trades';
  readonly streamId: string;
  /** What the current stream delivered; a new stream (a new epoch) starts a new history. */
  #history: { stream: TradesStream; trades: TradeHistory } | undefined;

  constructor(market: string, timing: TargetTiming, context: PollContext) {
    super(streamTargetKey('trades', market), timing, context);
    this.streamId = market;
    context.cluster.follow(this.key, (result) => this.#onShared(result));
  }

  protected async pollOnce(): Promise<readonly PollOutcome[]> {
    const { cluster, now } = this.context;
    const { source } = this;
    const askedAt = this.beginAsk();
    // A refusal of a walk's later page is about that page, not about the market.
    let requests = 0;
    try {
      if (!(await this.holdsLease())) return [];
      const history = this.#streamHistory();
      if (history === undefined) return [];
      const pages = activityPages(source, this.streamId, () => {
        requests += 1;
        this.requestSent();
      });
      const walk = await walkActivity(pages, history.trades.seen, {
        firstPoll: !history.trades.started,
        listing: history.trades.listing,
      });
      if (this.removed) return [];
      if (!walk.complete)
        this.context.events.emit('trades:truncated', { market: this.streamId, pages: walk.pages });
      const receivedAt = now();
      const state = this.#apply(history, walk.fresh, askedAt, receivedAt);
      if (state !== undefined)
        cluster.share(this.key, () => ({
          kind: 'response',
          receivedAt,
          body: { trades: sharedWindow(state, walk.fresh) },
        }));
      this.emitPoll('trades', 1, 'ok', askedAt);
      return [];
    } catch (error) {
      if (this.removed) return [];
      if (requests === 1 && this.context.existence.isGone(error, { kind: 'market', value: this.streamId })) {
        this.emitPoll('trades', 1, 'not_found', askedAt, error);
        cluster.share(this.key, () => ({ kind: 'not_found' }));
        return [this.#notFound()];
      }
      return this.failed('trades', 1, askedAt, error);
    }
  }

  #notFound(): PollOutcome {
    return { type: 'not_found', kind: 'trades', id: this.streamId };
  }

  /** The market's stream and what it delivered; undefined when nobody streams it any more. */
  #streamHistory(): { stream: TradesStream; trades: TradeHistory } | undefined {
    const [stream] = this.context.registry.streamsOf('trades', this.streamId);
    if (stream === undefined) return undefined;
    if (this.#history?.stream !== stream) this.#history = { stream, trades: new TradeHistory() };
    return this.#history;
  }

  /** Publishes the entries the stream has not delivered; returns its state after them. */
  #apply(
    history: { stream: TradesStream; trades: TradeHistory },
    entries: readonly TradeEntry[],
    askedAt: number,
    receivedAt: number,
  ): TradesData | undefined {
    if (!this.accepts(askedAt)) return undefined;
    const { stream, trades } = history;
    const first = !stream.hasState;
    const states = tradesStates(stream.state, trades.absorb(entries));
    // No new trade still confirms the stream (its freshness), without an update.
    if (states.length === 0 && stream.state !== undefined) states.push(stream.state);
    // Upstream's activity has no snapshot time: `ts` is when the relay received it.
    const ts = new Date(receivedAt).toISOString();
    let changed = false;
    for (const state of states) {
      if (this.context.publisher.publish(stream, state, ts, ts, receivedAt)) changed = true;
    }
    this.confirmed(askedAt, first ? undefined : changed);
    return stream.state;
  }

  /** The lease holder's result, ordered by when it received it (its polls never overlap). */
  #onShared(result: SharedResult): void {
    if (result.kind === 'not_found') this.context.report(this.#notFound());
    if (result.kind !== 'response') return;
    const parsed = sharedTrades.safeParse(result.body);
    const history = this.#streamHistory();
    if (parsed.success && history !== undefined)
      this.#apply(history, parsed.data.trades, result.receivedAt, result.receivedAt);
  }
}
