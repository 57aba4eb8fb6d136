/**
 * @module sim/history
 * Probability history of a market (docs/upstream.md, `/api/markets/:id/history`): before
 * the simulator started, a smooth seeded curve ending at the opening fair price; since then, the
 * quotes recorded on ticks; last, the current quote. The same instant always gives the same point,
 * whatever the interval asked.
 */
import type { HistoryPoint } from '../upstream/schemas.ts';
import { priceNumber } from './fixed-point.ts';
import { ONE, type QuotePoint, quoteOf, type SimMarket } from './market.ts';
import { createPrng, deriveSeed } from './prng.ts';
import { isoTime } from './snapshots.ts';

export const historyIntervals = ['1h', '24h', '7d', '30d', 'all'] as const;
export type HistoryInterval = (typeof historyIntervals)[number];
/** Not shown upstream: the simulator's default (docs/upstream.md). */
export const DEFAULT_HISTORY_INTERVAL: HistoryInterval = '24h';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** Span covered and spacing of points per interval: 60 to 180 points, 'all' daily since creation. */
const INTERVALS: Record<HistoryInterval, { spanMs: number | undefined; stepMs: number }> = {
  '1h': { spanMs: HOUR_MS, stepMs: MINUTE_MS },
  '24h': { spanMs: DAY_MS, stepMs: 15 * MINUTE_MS },
  '7d': { spanMs: 7 * DAY_MS, stepMs: HOUR_MS },
  '30d': { spanMs: 30 * DAY_MS, stepMs: 4 * HOUR_MS },
  all: { spanMs: undefined, stepMs: DAY_MS },
};

/** Prices of the synthetic curve are rounded to 1e-4. */
const CURVE_GRAIN = 10_000;

export function historyOf(
  market: SimMarket,
  interval: HistoryInterval,
  startedAt: number,
  now: number,
): HistoryPoint[] {
  const { spanMs, stepMs } = INTERVALS[interval];
  const from = Math.max(market.createdAt, spanMs === undefined ? market.createdAt : now - spanMs);
  const curve = syntheticCurve(market, startedAt);
  const points: HistoryPoint[] = [];
  for (let at = Math.ceil(from / stepMs) * stepMs; at < now; at += stepMs) {
    const quote = at < startedAt ? curve(at) : (recordedAt(market.quotes, at) ?? curve(startedAt));
    points.push(pointOf(at, quote.bid, quote.ask));
  }
  const current = quoteOf(market);
  if (current) points.push(pointOf(now, current.bid, current.ask));
  return points;
}

function pointOf(at: number, bid: number, ask: number): HistoryPoint {
  const midpoint = (bid + ask) / 2;
  return {
    time: isoTime(at),
    midpoint_price: priceNumber(BigInt(Math.round(midpoint))),
    best_bid: priceNumber(BigInt(bid)),
    best_ask: priceNumber(BigInt(ask)),
    spread: priceNumber(BigInt(ask - bid)),
    probability: priceNumber(BigInt(Math.round(midpoint))),
  };
}

/** The last quote recorded at or before `at` (binary search over the time-ordered log). */
function recordedAt(quotes: readonly QuotePoint[], at: number): QuotePoint | undefined {
  let low = 0;
  let high = quotes.length - 1;
  let found: QuotePoint | undefined;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const quote = quotes[middle]!;
    if (quote.at <= at) {
      found = quote;
      low = middle + 1;
    } else high = middle - 1;
  }
  return found;
}

/** Two seeded waves (hours and days long) around the opening fair price, equal to it at start. */
function syntheticCurve(market: SimMarket, startedAt: number): (at: number) => QuotePoint {
  const rng = createPrng(deriveSeed(0, 'curve', market.id));
  const waves = [
    { amplitude: 0.02 + rng.next() * 0.05, period: (2 + rng.next() * 10) * HOUR_MS, phase: rng.next() * 7 },
    { amplitude: 0.05 + rng.next() * 0.1, period: (2 + rng.next() * 8) * DAY_MS, phase: rng.next() * 7 },
  ];
  const halfSpread = rng.int(1, 4) * (ONE / 200);
  const wave = (at: number): number =>
    waves.reduce((sum, w) => sum + w.amplitude * Math.sin((2 * Math.PI * at) / w.period + w.phase), 0);
  const offset = wave(startedAt);
  return (at) => {
    const raw = market.openingFair + (wave(at) - offset) * ONE;
    const midpoint = Math.min(ONE - 2 * halfSpread, Math.max(2 * halfSpread, raw));
    const grain = (value: number): number => Math.round(value / CURVE_GRAIN) * CURVE_GRAIN;
    return { at, bid: grain(midpoint - halfSpread), ask: grain(midpoint + halfSpread) };
  };
}
