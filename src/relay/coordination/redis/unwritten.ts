/**
 * @module relay/coordination/redis/unwritten
 * What a lease holder numbered while Redis was away (docs/cluster.md "Redis outages"): the entries
 * of its polls, oldest first, and the state after the last, written in one fenced commit when Redis
 * is back, so the cluster's streams continue from where the holder's clients stand. One commit,
 * so that the write is as quick as one poll's and cannot outlast the lease it is fenced by.
 */
import type { OwnEntry } from './numbering.ts';
import type { PollWrite, StreamLog, WriteOutcome } from './stream-log.ts';

/**
 * The most entries kept: a longer outage drops the oldest, and a follower that needs them starts
 * over from the stored state (a snapshot) instead of catching up.
 */
const MOST_ENTRIES = 2_000;

export class UnwrittenPolls {
  #entries: OwnEntry<unknown>[] = [];
  #last: PollWrite | undefined;
  readonly #onWritten: ((entries: readonly OwnEntry<unknown>[]) => void) | undefined;

  /** `onWritten` hears of the entries once they are written (the shared history records them then). */
  constructor(onWritten?: (entries: readonly OwnEntry<unknown>[]) => void) {
    this.#onWritten = onWritten;
  }

  get pending(): boolean {
    return this.#last !== undefined;
  }

  /** One poll numbered alone; `poll.state` is the whole state after it (the stored state to write). */
  add(poll: PollWrite, entries: readonly OwnEntry<unknown>[]): void {
    this.#last = poll;
    this.#entries.push(...entries);
    if (this.#entries.length > MOST_ENTRIES) this.#entries.splice(0, this.#entries.length - MOST_ENTRIES);
  }

  /** Writes everything kept under the writer's lease; kept for another try unless written. */
  async write(log: StreamLog, target: string): Promise<WriteOutcome> {
    if (this.#last === undefined) return 'written';
    const outcome = await log.commit(target, this.#last, this.#entries);
    if (outcome === 'written') {
      this.#onWritten?.(this.#entries);
      this.clear();
    }
    return outcome;
  }

  clear(): void {
    this.#entries = [];
    this.#last = undefined;
  }
}
