/**
 * The staleness rule (docs/operations.md "Freshness"): stale once upstream has failed to answer for
 * longer than the threshold since the last success; a request still under way within the upstream
 * timeout, after a success, is waiting, not failing.
 */
import { describe, expect, it } from 'vitest';
import { staleReason } from '../../../src/relay/poll/freshness.ts';
import type { Confirmation } from '../../../src/relay/poll/poll-target.ts';

const timing = { minIntervalMs: 1_000, maxAgeMs: 30_000 };
const rule = { staleAfterFactor: 3, requestTimeoutMs: 5_000 };

function confirmation(overrides: Partial<Confirmation>): Confirmation {
  return {
    addedAt: 0,
    confirmedAt: 10_000,
    lastError: undefined,
    meanAskGapMs: 1_000,
    awaitingSince: undefined,
    ...overrides,
  };
}

describe('staleReason', () => {
  it('is fresh within 3 intervals of the last success', () => {
    expect(staleReason(confirmation({}), timing, 1_000, rule, 13_000)).toBeUndefined();
  });

  it('is stale past them when nothing is asked', () => {
    expect(staleReason(confirmation({}), timing, 1_000, rule, 13_001)).toBe('no upstream response');
  });

  it('waits for a request under way until its timeout, then calls it stale', () => {
    const waiting = confirmation({ awaitingSince: 11_000 });
    expect(staleReason(waiting, timing, 1_000, rule, 15_999)).toBeUndefined();
    expect(staleReason(waiting, timing, 1_000, rule, 16_000)).toBeUndefined();
    expect(staleReason(waiting, timing, 1_000, rule, 16_001)).toBe('no upstream response');
  });

  it('does not wait for a request when the last one failed', () => {
    const failing = confirmation({ awaitingSince: 13_500, lastError: 'upstream error' });
    expect(staleReason(failing, timing, 1_000, rule, 14_000)).toBe('upstream error');
  });

  it('judges a first answer from the subscription', () => {
    const first = confirmation({ confirmedAt: undefined, addedAt: 10_000, awaitingSince: 10_000 });
    expect(staleReason(first, timing, 1_000, rule, 14_000)).toBeUndefined();
    expect(staleReason(first, timing, 1_000, rule, 15_001)).toBe('no upstream response');
  });
});
