/**
 * Hourly `trades` candles checked against the simulator's prints, hour by hour: a run that crosses
 * the top of an hour checks both hours' candles instead of waiting on one that no longer gets the
 * new prints.
 */
import type { CandlesData, TradesCandle } from '../../../packages/protocol/src/protocol/messages.ts';

const HOUR = 3_600_000;

export function hourStart(at: number): number {
  return Math.floor(at / HOUR) * HOUR;
}

/** The print count of every hour from `since` (an hour's start) on that holds prints, by candle start. */
function printsByHour(prints: readonly { at: number }[], since: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { at } of prints) {
    if (at < since) continue;
    const start = new Date(hourStart(at)).toISOString();
    counts.set(start, (counts.get(start) ?? 0) + 1);
  }
  return counts;
}

/** The hourly candles from `since` on. */
export function candlesSince(state: CandlesData, since: number): TradesCandle[] {
  return state.candles.filter((candle) => Date.parse(candle.start) >= since) as TradesCandle[];
}

/** Whether every hour from `since` on that holds prints has a candle counting exactly those prints. */
export function hourlyCountsMatch(
  state: CandlesData | undefined,
  prints: readonly { at: number }[],
  since: number,
): boolean {
  if (state === undefined) return false;
  const candles = candlesSince(state, since);
  return [...printsByHour(prints, since)].every(
    ([start, count]) => candles.find((candle) => candle.start === start)?.trades === count,
  );
}
