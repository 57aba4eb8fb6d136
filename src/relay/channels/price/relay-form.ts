/**
 * @module relay/channels/price/relay-form
 * A `price` stream's state and messages as one relay passes them to another (../relay-form.ts):
 * upstream's fields, and an update's field as null when upstream stopped sending it; and the
 * upstream price entry a lease holder shares with the relays that follow its target
 * (relay/coordination/shared-result.ts).
 */
import { z } from 'zod';
import { priceFields } from '../../../../packages/protocol/src/protocol/messages.ts';
import { clobPriceSnapshot } from '../../../upstream/schemas.ts';
import { decimalText, streamFields } from '../relay-form.ts';

type PriceField = (typeof priceFields)[number];

export const priceStateForm = z.object(
  Object.fromEntries(priceFields.map((field) => [field, decimalText.optional()])) as Record<
    PriceField,
    z.ZodOptional<typeof decimalText>
  >,
);
const priceUpdateForm = z.object(
  Object.fromEntries(priceFields.map((field) => [field, decimalText.nullable().optional()])) as Record<
    PriceField,
    z.ZodOptional<z.ZodNullable<typeof decimalText>>
  >,
);

const priceMessage = <Type extends 'snapshot' | 'update', Data extends z.ZodType>(type: Type, data: Data) =>
  z.object({ type: z.literal(type), channel: z.literal('price'), ...streamFields, data });

export const priceMessageForm = {
  snapshot: priceMessage('snapshot', priceStateForm),
  update: priceMessage('update', priceUpdateForm),
};

/** One market's entry of upstream's price batch, when it was received. */
export const priceSharedForm = z.object({
  kind: z.literal('price'),
  receivedAt: z.number(),
  entry: clobPriceSnapshot,
});
