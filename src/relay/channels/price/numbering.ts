/**
 * @module relay/channels/price/numbering
 * A market's `price` stream as a numbered target of one stream, its state the target's own.
 */

import { applyPriceUpdate } from '../../../../packages/protocol/src/channels/price/price.ts';
import type { PriceData, PriceUpdateData } from '../../../../packages/protocol/src/protocol/messages.ts';
import type { TargetNumbering } from '../relay-definition.ts';
import { priceCodec } from './codec.ts';
import { diffPrice } from './diff.ts';

export const priceNumbering: TargetNumbering<'price', PriceData, PriceUpdateData> = {
  ...priceCodec,
  diff: diffPrice,
  channel: 'price',
  streams: [{ field: 'price', depth: undefined }],
  project: (state) => state,
  apply: applyPriceUpdate,
};
