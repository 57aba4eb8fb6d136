/**
 * @module util/stream-key
 * A stream's map key (`streamKey`: channel, market and, for `book`, depth and group), built the same
 * way by the relay's registry and connections and by the client SDK's subscription table. The relay's
 * other keys (poll targets, Redis names) are the server's own: src/relay/coordination/redis/keys.ts.
 */

/**
 * A `book` stream is keyed by its depth too (`full` for the whole book) and, when grouped, its group
 * step; other channels have neither.
 */
export function streamKey(channel: string, market: string, depth?: number | null, group?: string): string {
  if (channel !== 'book') return `${channel}:${market}`;
  return group === undefined
    ? `book:${market}:${depth ?? 'full'}`
    : `book:${market}:${depth ?? 'full'}:${group}`;
}
