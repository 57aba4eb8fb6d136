/**
 * @module channels/stream-key
 * A stream's map key (`streamKey`: channel, market and, on a channel whose streams are cut to a
 * depth, depth and group), built the same way by the relay's registry and connections and by the
 * client SDK's subscription table. The relay's other keys (poll targets, Redis names) are the
 * server's own: src/relay/coordination/redis/keys.ts.
 */
import { hasDepths } from './registry.ts';

/**
 * A stream of a channel with depths (./registry.ts `hasDepths`) is keyed by its depth too (`full`
 * for the whole book) and, when grouped, its group step; other channels' streams have neither.
 */
export function streamKey(channel: string, market: string, depth?: number | null, group?: string): string {
  if (!hasDepths(channel)) return `${channel}:${market}`;
  return group === undefined
    ? `${channel}:${market}:${depth ?? 'full'}`
    : `${channel}:${market}:${depth ?? 'full'}:${group}`;
}
