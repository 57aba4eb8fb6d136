/**
 * A poll source for tests of the poll side: every upstream call stays unanswered (a promise that
 * never settles) unless `answers` gives it, so a test names only the calls it means to answer.
 */
import type { PollSource } from '../../src/relay/poll/poller-pool.ts';

const unanswered = (): Promise<never> => new Promise(() => {});

export function pollSourceOf(answers: Partial<PollSource> = {}): PollSource {
  return {
    orderBook: unanswered,
    clobPrices: unanswered,
    probabilities: unanswered,
    market: unanswered,
    markets: unanswered,
    marketActivity: unanswered,
    publicBody: unanswered,
    tokenPrice: unanswered,
    ...answers,
  };
}
