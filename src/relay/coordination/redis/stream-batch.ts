/**
 * @module relay/coordination/redis/stream-batch
 * What a lease holder writes for one poll of its target, and what followers receive on the
 * target's channel: per stream its position (`epoch`, `seq`) and, when it changed, the exact
 * message the holder numbered (an `update`, or the `snapshot` that starts a new epoch). Followers
 * serve those messages as they are; nothing from the wire is trusted, so everything is validated
 * again on arrival (and the stored states read back from Redis too).
 */
import { z } from 'zod';
import { bookMessageForm } from '../../channels/book/relay-form.ts';
import { priceMessageForm } from '../../channels/price/relay-form.ts';
import { streamFields } from '../../channels/relay-form.ts';

const { epoch, seq, ts: timestamp } = streamFields;
/** A message of a target's stream, as the channel's slice writes it between relays. */
export const streamMessage = z.union([
  bookMessageForm('snapshot'),
  bookMessageForm('update'),
  priceMessageForm.snapshot,
  priceMessageForm.update,
]);
export type LoggedMessage = z.infer<typeof streamMessage>;

export const entryKinds = ['update', 'reset', 'confirm'] as const;
export type EntryKind = (typeof entryKinds)[number];

const entry = z.object({
  stream: z.string().max(16),
  epoch,
  seq,
  kind: z.enum(entryKinds),
  /** `update`: the update; `reset`: the snapshot of the new epoch; `confirm`: none. */
  message: streamMessage.optional(),
});

const token = z.number().int().positive();
export const streamBatch = z.union([
  z.object({ token, closed: z.literal(true) }),
  z.object({ token, receivedAt: z.number(), ts: timestamp, rts: timestamp, entries: z.array(entry).max(8) }),
]);
export type StreamBatch = z.infer<typeof streamBatch>;

/** Parses what came over the wire (or out of Redis); undefined for anything malformed. */
export function parseJson<T>(schema: z.ZodType<T>, text: string): T | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const result = schema.safeParse(json);
  return result.success ? result.data : undefined;
}

/** One stream of a poll as the holder writes it; `text` is the message already serialised. */
export interface WrittenEntry {
  stream: string;
  epoch: string;
  seq: number;
  kind: EntryKind;
  text: string | undefined;
}

/** The batch's JSON, built around the messages' own text (they are serialised once). */
export function encodeBatch(
  tokenValue: number,
  poll: { receivedAt: number; ts: string; rts: string },
  entries: readonly WrittenEntry[],
): string {
  const parts = entries.map(
    (written) =>
      `{"stream":${JSON.stringify(written.stream)},"epoch":${JSON.stringify(written.epoch)},"seq":${written.seq},"kind":"${written.kind}"${written.text === undefined ? '' : `,"message":${written.text}`}}`,
  );
  return `{"token":${tokenValue},"receivedAt":${poll.receivedAt},"ts":${JSON.stringify(poll.ts)},"rts":${JSON.stringify(poll.rts)},"entries":[${parts.join(',')}]}`;
}

export function encodeClosed(tokenValue: number): string {
  return JSON.stringify({ token: tokenValue, closed: true });
}

/** Whether a payload on a target's channel is a batch (not a shared upstream response). */
export function isBatchPayload(payload: string): boolean {
  return payload.startsWith('{"token":');
}
