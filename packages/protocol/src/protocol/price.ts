/**
 * @module protocol/price
 * Applying a `price` update to the last known price record (protocol.md "`price` data"): changed
 * fields replace, `null` removes a field upstream stopped sending. Shared by the relay's tests and
 * the client SDK.
 */
import { type PriceData, type PriceUpdateData, priceFields } from './messages.ts';

export function applyPriceUpdate(state: PriceData, update: PriceUpdateData): PriceData {
  const next: PriceData = {};
  for (const field of priceFields) {
    const value = field in update ? update[field] : state[field];
    if (typeof value === 'string') next[field] = value;
  }
  return next;
}
