/**
 * @module util/stream-key
 * A stream's map key (`streamKey`: channel, market and, for `book`, depth), built the same way by the
 * relay's registry and connections and by the client SDK's subscription table. The relay's other
 * keys (poll targets, Redis names) are the server's own: src/relay/coordination/redis/keys.ts.
 */

/** A `book` stream is keyed by its depth too (`full` for the whole book); other channels have no depth. */
export function streamKey(channel: string, market: string, depth?: number | null): string {
  return channel === 'book' ? `book:${market}:${depth ?? 'full'}` : `${channel}:${market}`;
}
