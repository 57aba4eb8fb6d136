/**
 * @module sim/prng
 * A small seeded PRNG (mulberry32) so the simulator is deterministic for a seed and a clock; the
 * simulator never uses Math.random. Seeds of sub-streams are derived by hashing, so one market's
 * stream does not depend on how many draws another market made.
 */

export interface Prng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max] (both inclusive). */
  int(min: number, max: number): number;
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** `length` lowercase hex digits. */
  hex(length: number): string;
}

export function createPrng(seed: number): Prng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    chance: (probability) => next() < probability,
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new RangeError('pick from an empty list');
      return items[int(0, items.length - 1)] as T;
    },
    hex: (length) => {
      let out = '';
      while (out.length < length) out += int(0, 15).toString(16);
      return out;
    },
  };
}

/** A 32-bit seed for a named sub-stream (FNV-1a over the parts). */
export function deriveSeed(seed: number, ...parts: (string | number)[]): number {
  let hash = 0x811c9dc5 ^ (seed >>> 0);
  for (const char of parts.join('\u0000')) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** A UUID (version 4 layout) drawn from the stream. */
export function randomUuid(prng: Prng): string {
  const variant = (8 + prng.int(0, 3)).toString(16);
  return `${prng.hex(8)}-${prng.hex(4)}-4${prng.hex(3)}-${variant}${prng.hex(3)}-${prng.hex(12)}`;
}
