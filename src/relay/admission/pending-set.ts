/**
 * @module relay/admission/pending-set
 * TCP connections that have not finished their first request (docs/operations.md "Edge limits"), as a
 * pure set over an injectable clock; ws/pending-connections.ts applies its verdicts to sockets.
 *
 * Idle sockets must not lock everyone else out, so a full set never refuses the newcomer: it sheds
 * the connection that has sent the least, the oldest first among equals (an idle socket has sent
 * nothing, a client that connected a moment ago is about to send), as nginx and HAProxy do. And the
 * fuller the set, the less time each connection gets to send its headers: from half full the
 * deadline shrinks with the free room, down to a tenth of `headersTimeoutMs` when full.
 */

export interface PendingLimits {
  /** Pending connections in all, and per address group (`perGroup` false: not applied). */
  maxPending: number;
  maxPendingPerGroup: number;
  perGroup: boolean;
  headersTimeoutMs: number;
}

/** One pending connection, as the set sees it. */
export interface PendingEntry {
  /** Its address group (relay/admission/client-address.ts `addressGroup`). */
  readonly group: string;
  readonly openedAt: number;
  /** Bytes it has sent so far. */
  bytesRead(): number;
}

/**
 * `shed`: entries taken out of the set to make room or because their shortened deadline passed (the
 * caller answers and closes them). `refused`: the newcomer's group already holds its share.
 */
export type PendingVerdict =
  | { admitted: true; shed: PendingEntry[] }
  | { admitted: false; shed: PendingEntry[] };

/** The shortest deadline, as a share of `headersTimeoutMs`, reached when the set is full. */
const SHORTEST_SHARE = 0.1;

export class PendingSet {
  readonly #limits: PendingLimits;
  readonly #now: () => number;
  /** Insertion order is age order: the oldest first. */
  readonly #entries = new Set<PendingEntry>();
  readonly #byGroup = new Map<string, number>();

  constructor(limits: PendingLimits, now: () => number = () => performance.now()) {
    this.#limits = limits;
    this.#now = now;
  }

  get size(): number {
    return this.#entries.size;
  }

  get groups(): Iterable<string> {
    return this.#byGroup.keys();
  }

  /** How long a pending connection may take now, given how full the set is. */
  deadlineMs(): number {
    const fill = this.#entries.size / this.#limits.maxPending;
    const share = Math.min(1, Math.max(SHORTEST_SHARE, 2 * (1 - fill)));
    return this.#limits.headersTimeoutMs * share;
  }

  /** A connection arrived: admitted (perhaps shedding others) or refused for its group's share. */
  open(entry: PendingEntry): PendingVerdict {
    const shed = this.#expired();
    const { perGroup, maxPendingPerGroup, maxPending } = this.#limits;
    if (perGroup && (this.#byGroup.get(entry.group) ?? 0) >= maxPendingPerGroup) {
      return { admitted: false, shed };
    }
    while (this.#entries.size >= maxPending) {
      const victim = this.#leastSent();
      if (victim === undefined) break;
      this.settle(victim);
      shed.push(victim);
    }
    this.#entries.add(entry);
    this.#byGroup.set(entry.group, (this.#byGroup.get(entry.group) ?? 0) + 1);
    return { admitted: true, shed };
  }

  /** It sent its first request, or closed, or was shed (idempotent). */
  settle(entry: PendingEntry): void {
    if (!this.#entries.delete(entry)) return;
    const left = (this.#byGroup.get(entry.group) ?? 0) - 1;
    if (left > 0) this.#byGroup.set(entry.group, left);
    else this.#byGroup.delete(entry.group);
  }

  /** The oldest entries past the deadline the set's fill allows now, taken out. */
  #expired(): PendingEntry[] {
    const expired: PendingEntry[] = [];
    const oldestAllowed = this.#now() - this.deadlineMs();
    for (const entry of this.#entries) {
      if (entry.openedAt > oldestAllowed) break;
      expired.push(entry);
    }
    for (const entry of expired) this.settle(entry);
    return expired;
  }

  /** The entry that has sent the fewest bytes, the oldest among equals. */
  #leastSent(): PendingEntry | undefined {
    let victim: PendingEntry | undefined;
    let least = Number.POSITIVE_INFINITY;
    for (const entry of this.#entries) {
      const sent = entry.bytesRead();
      if (sent < least) {
        victim = entry;
        least = sent;
        if (sent === 0) break;
      }
    }
    return victim;
  }
}
