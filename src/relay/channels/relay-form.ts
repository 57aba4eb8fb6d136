/**
 * @module relay/channels/relay-form
 * What every numbered channel's messages share in the form one relay passes them to another (the
 * cluster's stream batches and stored targets, relay/coordination/redis/): nothing from the wire
 * is trusted, so each is validated again on arrival. Keys are in the order the relay writes them
 * (relay/streams/stream.ts), so a message read back serialises to the same text.
 */
import { z } from 'zod';

/** The longest decimal text a relay takes from another. */
export const DECIMAL_TEXT_MAX_LENGTH = 64;
/** A decimal as text, bounded. */
export const decimalText = z.string().min(1).max(DECIMAL_TEXT_MAX_LENGTH);

const timestamp = z.string().max(40);

/** The fields of a stream message between its `channel` and its own fields, in the relay's order. */
export const streamFields = {
  market: z.string().max(100),
  epoch: z.string().min(1).max(64),
  seq: z.number().int().positive(),
  ts: timestamp,
  rts: timestamp,
};
