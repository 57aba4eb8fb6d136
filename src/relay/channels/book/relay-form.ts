/**
 * @module relay/channels/book/relay-form
 * A `book` stream's state and messages as one relay passes them to another (../relay-form.ts):
 * the levels, and each message with its depth and checksum; and the upstream book a lease holder
 * shares with the relays that follow its target (relay/coordination/shared-result.ts).
 */
import { z } from 'zod';
import { bookDepths } from '../../../../packages/protocol/src/protocol/messages.ts';
import { orderBook, price8 } from '../../../upstream/schemas.ts';
import { DECIMAL_TEXT_MAX_LENGTH, decimalText, streamFields } from '../relay-form.ts';

/**
 * A level's price in upstream's form, eight places (a grouped book's too): the slice's diff orders
 * levels by that form alone (./checked-decimals.ts), so a state from another relay is held to it.
 */
const price = price8.max(DECIMAL_TEXT_MAX_LENGTH);
const level = z.tuple([price, decimalText]);
export const bookStateForm = z.object({
  bids: z.array(level),
  asks: z.array(level),
  last_price: price.optional(),
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

/** A market's order book as upstream sent it, when it was received. */
export const bookSharedForm = z.object({ kind: z.literal('book'), receivedAt: z.number(), book: orderBook });
