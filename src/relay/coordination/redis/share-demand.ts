/**
 * @module relay/coordination/redis/share-demand
 * Whether the lease holder shares a poll's upstream response (docs/cluster.md "Cluster-wide
 * streams"). Most followers serve only what the holder numbers and never read the response: a
 * follower with streams of its own made from it (a grouped book, `orders`) says so with each claim,
 * and the holder's claim learns whether any did within a lease TTL (stream-scripts.ts CLAIM). A
 * relay of the release before says nothing of the kind, so a response nobody asked for is still
 * shared once a second: such a follower's streams stay alive through a rolling upgrade, slower.
 */

/** How often a response nobody asked for is shared all the same (see above). */
export const UNASKED_SHARE_MS = 1_000;

export class ShareDemand {
  /** Targets held here whose followers asked for the response, as of the last claim. */
  readonly #asked = new Set<string>();
  /** When each held target's response was last shared. */
  readonly #sharedAt = new Map<string, number>();

  /** What the holder's last claim of `target` learnt. */
  learnt(target: string, asked: boolean): void {
    if (asked) this.#asked.add(target);
    else this.#asked.delete(target);
  }

  /** The target is no longer held here. */
  forget(target: string): void {
    this.#asked.delete(target);
    this.#sharedAt.delete(target);
  }

  /** Whether to share `target`'s response now; counted as shared when it says yes. */
  shareNow(target: string, now: number): boolean {
    const last = this.#sharedAt.get(target);
    if (!this.#asked.has(target) && last !== undefined && now - last < UNASKED_SHARE_MS) return false;
    this.#sharedAt.set(target, now);
    return true;
  }
}
