/**
 * @module relay/channels
 * The codec of each channel of protocol v1: how two states of it are diffed and whether it carries
 * a checksum (protocol.md "`book` data", "`price` data").
 */
import { type BookState, bookChecksum } from '../protocol/book.ts';
import type { BookData, PriceData, PriceUpdateData } from '../protocol/messages.ts';
import type { ClobPriceSnapshot } from '../upstream/schemas.ts';
import { diffBook, diffPrice } from './diff.ts';
import type { StreamCodec } from './stream.ts';

export const bookCodec: StreamCodec<BookState, BookData> = { diff: diffBook, checksum: bookChecksum };
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

/** protocol.md: `ts` is ISO 8601 UTC with milliseconds; upstream's batch prices may omit them. */
export function withMilliseconds(timestamp: string): string {
  return new Date(timestamp).toISOString();
}
