/**
 * @module protocol/requests
 * What clients send (protocol.md "Client -> relay") as zod schemas: the relay validates every
 * frame with them, and the request types of ./messages.ts are derived from them.
 */
import { z } from 'zod';
import { uuid } from '../upstream/schemas.ts';
import { MAX_MARKETS_PER_REQUEST } from './messages.ts';

/**
 * Market ids are compared in one spelling: UUIDs are case-insensitive, so a client may send any
 * case and the relay answers, streams and polls in lower case (one stream per market).
 */
const marketId = uuid.transform((id) => id.toLowerCase());
const requestId = z.union([z.string().max(128), z.number().int()]);
const resumePoint = z.object({ epoch: z.string().min(1).max(64), seq: z.number().int().nonnegative() });

/**
 * `channel` is any string here so that an unknown channel is answered `unknown_channel`, not
 * `bad_request` (protocol.md "Error codes").
 */
export const subscribeRequest = z.object({
  op: z.literal('subscribe'),
  id: requestId.optional(),
  channel: z.string(),
  markets: z.array(marketId).min(1).max(MAX_MARKETS_PER_REQUEST),
  depth: z.union([z.literal(10), z.literal(50), z.null()]).optional(),
  resume: z.record(marketId, resumePoint).optional(),
});

export const unsubscribeRequest = z.object({
  op: z.literal('unsubscribe'),
  id: requestId.optional(),
  channel: z.string(),
  markets: z.array(marketId).min(1).max(MAX_MARKETS_PER_REQUEST),
  depth: z.union([z.literal(10), z.literal(50), z.null()]).optional(),
});

export const pingRequest = z.object({ op: z.literal('ping'), id: requestId.optional() });

export const clientRequest = z.discriminatedUnion('op', [subscribeRequest, unsubscribeRequest, pingRequest]);

export type RequestId = z.infer<typeof requestId>;
export type ResumePoint = z.infer<typeof resumePoint>;
export type SubscribeRequest = z.infer<typeof subscribeRequest>;
export type UnsubscribeRequest = z.infer<typeof unsubscribeRequest>;
export type PingRequest = z.infer<typeof pingRequest>;
export type ClientRequest = z.infer<typeof clientRequest>;
