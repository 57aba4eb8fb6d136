/**
 * @module cluster/rendezvous
 * Which live relay should hold a target's lease (docs/cluster.md "How leases move"): rendezvous
 * (highest random weight) hashing. Every relay computes the same answer from the same list of live
 * relays, with no table to agree on; a relay that joins takes about 1/N of the targets, from every
 * other relay alike, and one that leaves gives only its own targets away.
 */

/** FNV-1a, 32 bits, then a final mix: cheap, and spread well enough over short similar strings. */
function hash(text: string): number {
  let value = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    value ^= text.charCodeAt(i);
    value = Math.imul(value, 0x01000193);
  }
  value ^= value >>> 16;
  value = Math.imul(value, 0x85ebca6b);
  value ^= value >>> 13;
  value = Math.imul(value, 0xc2b2ae35);
  value ^= value >>> 16;
  return value >>> 0;
}

/** The relay of `relays` that should hold `target`; undefined when there is none. */
export function preferredRelay(target: string, relays: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const relay of relays) {
    const score = hash(`${relay}\n${target}`);
    if (score > bestScore || (score === bestScore && best !== undefined && relay < best)) {
      best = relay;
      bestScore = score;
    }
  }
  return best;
}
