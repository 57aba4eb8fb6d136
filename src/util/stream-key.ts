/**
 * @module util/stream-key
 * The one map key of a (channel, market[, depth]) stream, used by the relay's registry and
 * connections and by the client SDK's subscription table. A `book` stream is keyed by its depth
 * too (`full` for the whole book); other channels have no depth.
 */
export function streamKey(channel: string, market: string, depth?: number | null): string {
  return channel === 'book' ? `book:${market}:${depth ?? 'full'}` : `${channel}:${market}`;
}
