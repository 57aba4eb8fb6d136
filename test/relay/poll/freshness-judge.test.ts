/**
 * The freshness report the pool keeps (relay/poll/freshness.ts): made from one walk over the
 * targets, its ages run on to the time asked, and a change of the target set is walked again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { pollTargets } from '../../../src/poll-targets.ts';
import { LocalBroker } from '../../../src/relay/coordination/local/broker.ts';
import { RelayEvents } from '../../../src/relay/events.ts';
import { PollerPool } from '../../../src/relay/poll/poller-pool.ts';
import { StreamRegistry } from '../../../src/relay/streams/registry.ts';
import type { StreamSubscriber } from '../../../src/relay/streams/stream.ts';
import { pollSourceOf } from '../../support/poll-source.ts';
import { waitFor } from '../../support/wait-for.ts';

const marketId = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

/** An upstream that never answers: nothing is ever confirmed. */
const source = pollSourceOf();

const nobody: StreamSubscriber = { deliver() {}, notify() {}, ended() {} };

describe('the freshness report', () => {
  let poller: PollerPool | undefined;
  afterEach(() => poller?.stop());

  it('ages the oldest target to the time asked, and walks the targets again when they change', async () => {
    let clock = 1_000;
    const registry: StreamRegistry = new StreamRegistry({
      lingerMs: 10,
      resumeBufferSize: 10,
    });
    poller = new PollerPool({
      targets: pollTargets,
      source,
      broker: new LocalBroker(),
      registry,
      events: new RelayEvents(),
      bookPollMs: 100,
      pricePollMs: 100,
      upstreamRps: 100,
      concurrency: 4,
      scheduler: 'freshness',
      maxAgeMs: 30_000,
      staleAfterFactor: 3,
      now: () => clock,
    });
    const pool = poller;
    const book = registry.subscribe(nobody, { channel: 'book', market: marketId(1), depth: null });
    expect(pool.freshness(1_500).oldestAgeMs).toBe(500);
    expect(pool.freshness(4_000).oldestAgeMs).toBe(3_000);
    clock = 5_000;
    registry.subscribe(nobody, { channel: 'price', market: marketId(2) });
    expect(pool.freshness(6_000).oldestAgeMs).toBe(5_000); // the book is still the oldest
    registry.unsubscribe(nobody, book);
    await waitFor('the book target dropped', () => pool.bookMarketCount === 0);
    expect(pool.freshness(6_000).oldestAgeMs).toBe(1_000); // the price market, added at 5000
    expect(pool.freshness(36_000)).toMatchObject({ oldestAgeMs: 31_000, maxAgeKept: false });
  });
});
