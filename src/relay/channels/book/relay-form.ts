/**
 * @module relay/channels/book/relay-form
 * A `book` stream's state and messages as one relay passes them to another (../relay-form.ts):
 * the levels, and each message with its depth and checksum.
 */
import { z } from 'zod';
import { bookDepths } from '../../../../packages/protocol/src/protocol/messages.ts';
import { decimalText, streamFields } from '../relay-form.ts';

const level = z.tuple([decimalText, decimalText]);
export const bookStateForm = z.object({
  bids: z.array(level),
  asks: z.array(level),
  last_price: decimalText.optional(),
});

const depth = z.union([...bookDepths.map((value) => z.literal(value)), z.null()]);
const checksum = z.number().int().nonnegative();

export const bookMessageForm = <Type extends 'snapshot' | 'update'>(type: Type) =>
  z.object({
    type: z.literal(type),
    channel: z.literal('book'),
    ...streamFields,
    depth,
    data: bookStateForm,
    checksum,
  });
