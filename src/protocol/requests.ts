/**
 * @module protocol/requests
 * What clients send (protocol.md "Client -> relay") as zod schemas: the relay validates every
 * frame with them, and the request types of ./messages.ts are derived from them. Limits come from
 * ./limits.ts, so this module needs nothing else of the project.
 */
import { z } from 'zod';
import { MARKET_ID_PATTERN, MAX_MARKETS_PER_REQUEST, MAX_REQUEST_ID_LENGTH } from './limits.ts';

/**
 * Market ids are compared in one spelling: UUIDs are case-insensitive, so a client may send any
 * case and the relay answers, streams and polls in lower case (one stream per market).
 */
const marketId = z
  .string()
  .regex(MARKET_ID_PATTERN, 'not a UUID')
  .transform((id) => id.toLowerCase());
const requestId = z.union([z.string().max(MAX_REQUEST_ID_LENGTH), z.number().int()]);
const resumePoint = z.object({ epoch: z.string().min(1).max(64), seq: z.number().int().nonnegative() });
/** Worded as docs/protocol.md's `bad_request` example, whichever bound is missed. */
const marketsExpected = `expected between 1 and ${MAX_MARKETS_PER_REQUEST} UUIDs`;

/**
 * `channel` is any string here so that an unknown channel is answered `unknown_channel`, not
 * `bad_request` (protocol.md "Error codes").
 */
/** The streams a subscribe or unsubscribe names: a channel, its markets and (book) depth. */
const streamSelection = {
  id: requestId.optional(),
  channel: z.string(),
  markets: z
    .array(marketId, { error: marketsExpected })
    .min(1, { error: marketsExpected })
    .max(MAX_MARKETS_PER_REQUEST, { error: marketsExpected }),
  depth: z.union([z.literal(10), z.literal(50), z.null()]).optional(),
};

export const subscribeRequest = z.object({
  op: z.literal('subscribe'),
  ...streamSelection,
  resume: z.record(marketId, resumePoint).optional(),
});

export const unsubscribeRequest = z.object({ op: z.literal('unsubscribe'), ...streamSelection });

export const pingRequest = z.object({ op: z.literal('ping'), id: requestId.optional() });

export const clientRequest = z.discriminatedUnion('op', [subscribeRequest, unsubscribeRequest, pingRequest]);

export type RequestId = z.infer<typeof requestId>;
export type ResumePoint = z.infer<typeof resumePoint>;
export type SubscribeRequest = z.infer<typeof subscribeRequest>;
export type UnsubscribeRequest = z.infer<typeof unsubscribeRequest>;
export type PingRequest = z.infer<typeof pingRequest>;
export type ClientRequest = z.infer<typeof clientRequest>;
