/**
 * @module relay/channels/price/codec
 * The `price` channel's state and codec (protocol.md "`price` data") and how a market's `price`
 * stream is numbered as a target of one stream, its state the target's own: upstream's price
 * snapshot of a market as it sent it, diffed field by field, with no checksum.
 */
import { applyPriceUpdate } from '../../../../packages/protocol/src/channels/price/price.ts';
import {
  type PriceData,
  type PriceUpdateData,
  priceFields,
} from '../../../../packages/protocol/src/protocol/messages.ts';
import type { ClobPriceSnapshot } from '../../../upstream/schemas.ts';
import type { TargetNumbering } from '../relay-definition.ts';

export const priceNumbering: TargetNumbering<'price', PriceData, PriceUpdateData> = {
  channel: 'price',
  diff: diffPrice,
  streams: [{ field: 'price', depth: undefined }],
  project: (state) => state,
  apply: applyPriceUpdate,
};

/** The price channel's state: upstream's decimal strings unchanged, omitted fields omitted. */
export function priceDataOf(snapshot: ClobPriceSnapshot): PriceData {
  const data: PriceData = {};
  if (snapshot.best_bid !== undefined) data.best_bid = snapshot.best_bid;
  if (snapshot.best_ask !== undefined) data.best_ask = snapshot.best_ask;
  if (snapshot.midpoint_price !== undefined) data.midpoint_price = snapshot.midpoint_price;
  if (snapshot.last_price !== undefined) data.last_price = snapshot.last_price;
  if (snapshot.spread !== undefined) data.spread = snapshot.spread;
  return data;
}

/**
 * The price fields that changed (upstream's text compared as-is), a field upstream stopped sending
 * as `null` (protocol.md "`price` data"); null when nothing changed, so that a poll that changed
 * nothing sends no update (protocol.md "Sequencing").
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
