/**
 * @module relay/streams/threshold
 * Whether a `price` state moved enough to be sent to a subscription with a `threshold`
 * (docs/protocol.md "Per-subscription options"): by at least the threshold, exactly (decimal
 * arithmetic on the strings, never a binary float), on best bid, best ask or midpoint, a field
 * appearing or disappearing counting as a move.
 */
import Big from 'big.js';

/** The fields a threshold watches. */
export const thresholdFields = ['best_bid', 'best_ask', 'midpoint_price'] as const;

/**
 * `moved`: a watched field moved by the threshold or more (or came or went); `withheld`: the state
 * differs, by less; `same`: nothing differs. A state that is no record (none yet) differs from any.
 */
export type Move = 'moved' | 'withheld' | 'same';

export function thresholdMove(from: unknown, to: unknown, threshold: string): Move {
  if (!isRecord(from) || !isRecord(to)) return from === to ? 'same' : 'moved';
  for (const field of thresholdFields) {
    const was = from[field];
    const is = to[field];
    if (typeof was !== 'string' || typeof is !== 'string') {
      if (typeof was !== typeof is) return 'moved';
      continue;
    }
    if (was !== is && new Big(is).minus(was).abs().gte(threshold)) return 'moved';
  }
  return sameRecord(from, to) ? 'same' : 'withheld';
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null;
}

function sameRecord(a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key]);
}
