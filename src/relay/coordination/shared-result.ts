/**
 * @module relay/coordination/shared-result
 * What a lease holder shares with the relays that follow a poll target: the upstream response as
 * it was received (validated again on arrival: nothing from the wire is trusted), when it was
 * received, or that upstream no longer has the market.
 */
import { z } from 'zod';
import { bookSharedForm } from '../channels/book/relay-form.ts';
import { priceSharedForm } from '../channels/price/relay-form.ts';
import { parseJson } from './redis/stream-batch.ts';

export const sharedResult = z.discriminatedUnion('kind', [
  bookSharedForm,
  priceSharedForm,
  /** Any other channel's upstream response, validated on arrival by the target that follows it. */
  z.object({ kind: z.literal('response'), receivedAt: z.number(), body: z.unknown() }),
  z.object({ kind: z.literal('not_found') }),
]);

export type SharedResult = z.infer<typeof sharedResult>;

/** Parses a shared payload; undefined for anything malformed. */
export function parseSharedResult(payload: string): SharedResult | undefined {
  return parseJson(sharedResult, payload);
}
