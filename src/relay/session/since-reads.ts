/**
 * @module relay/session/since-reads
 * The history reads behind `trades` subscriptions with `since` (docs/protocol.md "History since a
 * time"): each page a one-off request in a slot of the upstream budget (docs/scheduler.md
 * "One-off requests"), and one read shared by the subscribers asking the same (market, since) at
 * the same time. A subscriber may share a read only if it started no earlier than the subscriber
 * joined the live stream: the subscriber's held live updates must reach back to where the read
 * began, or trades between the two would be missing (relay/session/since-seam.ts).
 */

import type { ActivityUpstream } from '../../../packages/protocol/src/channels/trades/relay-activity-pages.ts';
import { readSince, type SinceRead } from '../../../packages/protocol/src/channels/trades/relay-since.ts';
import { type SinceSpec, sinceKey } from '../../../packages/protocol/src/channels/trades/since.ts';
import type { StreamPosition } from '../streams/frame.ts';

/** Where a one-off upstream request waits for its slot (the poller pool's dispatcher). */
export interface OneOffBudget {
  runOneOff<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T>;
}

export interface SinceReadsOptions {
  upstream: ActivityUpstream;
  budget: OneOffBudget;
  /** How long one page waits for its slot of the budget before the read fails. */
  slotWaitMs: number;
  /** The position of a market's `trades` stream now, if it has one. */
  position(market: string): StreamPosition | undefined;
}

interface SharedRead {
  result: Promise<SinceRead>;
  /** The stream's position when the read's first request started (undefined: not yet). */
  startedAt: StreamPosition | undefined;
}

export class SinceReads {
  readonly #options: SinceReadsOptions;
  readonly #reads = new Map<string, SharedRead>();
  /** Reads started (not shared), for the tests and the operator. */
  started = 0;

  constructor(options: SinceReadsOptions) {
    this.#options = options;
  }

  /** The trades of `market` since `since`, for a subscriber that joined its stream at `joinedAt`. */
  read(market: string, since: SinceSpec, joinedAt: StreamPosition): Promise<SinceRead> {
    const key = `${market} ${sinceKey(since)}`;
    const shared = this.#reads.get(key);
    const start = shared?.startedAt;
    if (
      shared !== undefined &&
      (start === undefined || (start.epoch === joinedAt.epoch && start.seq >= joinedAt.seq))
    )
      return shared.result;
    const read: SharedRead = {
      result: Promise.resolve({ ok: true, trades: [], pages: 0 }),
      startedAt: undefined,
    };
    const { upstream, budget, slotWaitMs, position } = this.#options;
    this.started += 1;
    read.result = readSince(
      (offset, limit) =>
        budget.runOneOff(async () => {
          read.startedAt ??= position(market) ?? joinedAt;
          const response = await upstream.marketActivity(market, { limit, offset });
          return { entries: response.activity, hasMore: response.pagination.hasMore };
        }, AbortSignal.timeout(slotWaitMs)),
      since,
      Date.now(),
    ).finally(() => {
      if (this.#reads.get(key) === read) this.#reads.delete(key);
    });
    this.#reads.set(key, read);
    return read.result;
  }
}
