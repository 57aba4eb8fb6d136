/**
 * @module channels/price/price
 * A `price` stream's data (protocol.md "`price` data") and how an update applies to the last known
 * price record: changed fields replace, `null` removes a field upstream stopped sending. Shared by
 * the relay and the client SDK.
 */

/** Price channel data: upstream's decimal strings; in an update, `null` means upstream stopped sending it. */
export const priceFields = ['best_bid', 'best_ask', 'midpoint_price', 'last_price', 'spread'] as const;
export type PriceField = (typeof priceFields)[number];
export type PriceData = Partial<Record<PriceField, string>>;
export type PriceUpdateData = Partial<Record<PriceField, string | null>>;

export function applyPriceUpdate(state: PriceData, update: PriceUpdateData): PriceData {
  const next: PriceData = {};
  for (const field of priceFields) {
    const value = field in update ? update[field] : state[field];
    if (typeof value === 'string') next[field] = value;
  }
  return next;
}
