/**
 * @module relay/coordination/redis/leases/rendezvous
 * Which live relay should hold a target's lease (docs/cluster.md "How leases move"): weighted
 * rendezvous (highest random weight) hashing. Every relay computes the same answer from the same
 * roster of live relays and their weights, with no table to agree on; a relay that joins takes its
 * share of the targets, from every other relay alike, and one that leaves gives only its own away.
 * A relay's share grows with its weight (relay/coordination/redis/leases/relay-weight.ts); equal weights split evenly.
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

/**
 * weight / -ln(u), with u the hash mapped into (0, 1): the relay with the highest score wins, and
 * each relay wins a target with probability weight / sum of weights. For equal weights the order
 * of scores is the order of hashes, so the choice is the unweighted one.
 */
function score(relay: string, target: string, weight: number): number {
  const unit = (hash(`${relay}\n${target}`) + 0.5) / 2 ** 32;
  return weight / -Math.log(unit);
}

/**
 * The relay of `relays` that should hold `target`; undefined when there is none. `weightOf` gives
 * each relay's weight (1 when it has none: a relay that announces none).
 */
export function preferredRelay(
  target: string,
  relays: readonly string[],
  weightOf: (relay: string) => number = () => 1,
): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const relay of relays) {
    const relayScore = score(relay, target, weightOf(relay));
    if (relayScore > bestScore || (relayScore === bestScore && best !== undefined && relay < best)) {
      best = relay;
      bestScore = relayScore;
    }
  }
  return best;
}
