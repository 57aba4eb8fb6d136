/**
 * @module relay/poll/due-times
 * The moments at which polled targets may be asked again, earliest first: the dispatcher sleeps
 * until the next one instead of looking for due targets on a fixed tick (relay/poll/dispatcher.ts).
 * A binary min-heap of times; a time whose target is gone meanwhile costs one turn that starts
 * nothing, so entries are never removed but by `takeUntil`.
 */
export class DueTimes {
  readonly #times: number[] = [];

  get size(): number {
    return this.#times.length;
  }

  /** The earliest time held; `Infinity` when none is. */
  get next(): number {
    return this.#times[0] ?? Number.POSITIVE_INFINITY;
  }

  add(at: number): void {
    const times = this.#times;
    let index = times.push(at) - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (times[parent]! <= at) break;
      times[index] = times[parent]!;
      index = parent;
    }
    times[index] = at;
  }

  /** Drops every time at or before `now`; how many there were. */
  takeUntil(now: number): number {
    let taken = 0;
    while (this.#times.length > 0 && this.#times[0]! <= now) {
      this.#removeFirst();
      taken += 1;
    }
    return taken;
  }

  clear(): void {
    this.#times.length = 0;
  }

  #removeFirst(): void {
    const times = this.#times;
    const last = times.pop()!;
    if (times.length === 0) return;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= times.length) break;
      const right = left + 1;
      const child = right < times.length && times[right]! < times[left]! ? right : left;
      if (times[child]! >= last) break;
      times[index] = times[child]!;
      index = child;
    }
    times[index] = last;
  }
}
