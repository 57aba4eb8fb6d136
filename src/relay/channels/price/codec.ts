/**
 * @module relay/channels/price/codec
 * The `price` channel's codec and state (protocol.md "`price` data"): upstream's price snapshot of
 * a market as it sent it, diffed field by field (./diff.ts), with no checksum.
 */
import type { PriceData, PriceUpdateData } from '../../../../packages/protocol/src/protocol/messages.ts';
import type { ClobPriceSnapshot } from '../../../upstream/schemas.ts';
import type { StreamCodec } from '../relay-definition.ts';
import { diffPrice } from './diff.ts';

export const priceCodec: StreamCodec<PriceData, PriceUpdateData> = { diff: diffPrice };

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
