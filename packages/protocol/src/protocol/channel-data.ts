/**
 * @module protocol/channel-data
 * What each channel's streams carry in `data` (docs/protocol.md, a section per channel; the fields in
 * docs/asyncapi.yaml): the state a snapshot holds and the change an update carries, with every
 * upstream field in upstream's own type. ./messages.ts wraps them in the stream messages and
 * re-exports them, so importers name one module. A channel with a folder of its own declares its
 * data there (channels/registry.ts).
 */
import type { JsonValue } from '../channels/records.ts';

export type { BookData, Level } from '../channels/book/wire.ts';

export {
  type PriceData,
  type PriceUpdateData,
  priceFields,
} from '../channels/price/price.ts';

/**
 * Channels beyond v1's `book` and `price` (docs/protocol.md, one section each). Each keeps
 * upstream's field types: decimal strings stay strings, numbers stay numbers.
 */

export type { MarketData, MarketUpdateData } from '../channels/market/wire.ts';
export type { MarketListRecord, MarketsData, MarketsUpdateData } from '../channels/markets/wire.ts';
/** A JSON value as upstream sent it (the `market` record's fields keep their upstream types). */
export type { JsonValue };

/**
 * `rest`: snapshot, upstream's body as served (every field with upstream's type); update, the
 * RFC 6902 JSON Patch from the previous state to the new one. Both carry a `checksum` of the state.
 */
export type RestData = JsonValue;
/** One operation of a `rest` update (the relay never sends `copy` or `test`; ./json-patch.ts applies all six). */
export type PatchOperation =
  | { op: 'add'; path: string; value: JsonValue }
  | { op: 'replace'; path: string; value: JsonValue }
  | { op: 'remove'; path: string }
  | { op: 'move'; from: string; path: string };
export type RestUpdateData = PatchOperation[];
