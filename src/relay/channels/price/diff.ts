/**
 * @module relay/channels/price/diff
 * What changed between two successive states of a `price` stream, as the `update` data of
 * protocol.md ("`price` data"). No update is sent for a poll that changed nothing
 * (protocol.md "Sequencing"), hence `null` for no change.
 */
import {
  type PriceData,
  type PriceUpdateData,
  priceFields,
} from '../../../../packages/protocol/src/protocol/messages.ts';

/**
 * The price fields that changed (upstream's text compared as-is), a field upstream stopped sending
 * as `null` (protocol.md "`price` data"); null when nothing changed.
 */
export function diffPrice(prev: PriceData, next: PriceData): PriceUpdateData | null {
  let update: PriceUpdateData | null = null;
  for (const field of priceFields) {
    const before = prev[field];
    const after = next[field];
    if (before === after) continue;
    update ??= {};
    update[field] = after ?? null;
  }
  return update;
}
