/**
 * @module util/spread-delays
 * When each of `count` connections leaves a draining relay (docs/operations.md "Shutdown"): the
 * window is cut into `count` equal slots, each connection gets one slot at random and a random
 * moment inside it. The clients that reconnect at once on close then arrive elsewhere at an even
 * rate (count / window per second, never a burst), and each gets a delay of its own: two never share
 * a slot, so they are distinct whenever a slot is at least a millisecond wide.
 */

/** A source of uniform numbers in [0, 1), injectable for tests. */
export type Uniform = () => number;

/** `count` whole-millisecond delays in [0, windowMs), one per slot, in random order. */
export function spreadDelays(count: number, windowMs: number, random: Uniform = Math.random): number[] {
  const slotMs = windowMs / count;
  const delays = Array.from({ length: count }, (_, slot) => {
    const start = Math.floor(slot * slotMs);
    const width = Math.floor((slot + 1) * slotMs) - start;
    // Clamped: a draw just below 1, times the width, may round up to the width itself.
    return start + Math.min(Math.floor(random() * width), Math.max(0, width - 1));
  });
  // Fisher-Yates: which connection gets which slot is as random as the moment inside it.
  for (let i = delays.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [delays[i], delays[j]] = [delays[j]!, delays[i]!];
  }
  return delays;
}
