/**
 * @module test/support/cluster/memory-lease-table
 * Recording leases in memory (relay/coordination/recording/lease-table.ts), for the contract test:
 * one `Map` shared by the tables of several relays of one test; `away` makes a relay's table reject
 * as Redis out of reach does; `answeringWhenTold` wraps one whose answers wait for the test.
 */
import type { LeaseTable } from '../../../src/relay/coordination/recording/lease-table.ts';

type Leases = Map<string, { holder: string; expires: number }>;

export class MemoryLeaseTable implements LeaseTable {
  away = false;
  readonly #leases: Leases;

  constructor(
    readonly holder: string,
    leases: Leases = new Map(),
  ) {
    this.#leases = leases;
  }

  /** Another relay's table over the same leases. */
  sibling(holder: string): MemoryLeaseTable {
    return new MemoryLeaseTable(holder, this.#leases);
  }

  async hold(key: string, ttlMs: number): Promise<boolean> {
    if (this.away) throw new Error('lease table away');
    const now = Date.now();
    const lease = this.#leases.get(key);
    if (lease !== undefined && lease.expires > now && lease.holder !== this.holder) return false;
    this.#leases.set(key, { holder: this.holder, expires: now + ttlMs });
    return true;
  }

  async release(key: string): Promise<void> {
    if (this.away) throw new Error('lease table away');
    if (this.#leases.get(key)?.holder === this.holder) this.#leases.delete(key);
  }
}

/**
 * `leases`' table whose every ask takes the lease at once but answers only when `answer` is called
 * (a relay paused, or a reply late): `asked` is true once an ask waits.
 */
export function answeringWhenTold(leases: MemoryLeaseTable): {
  table: LeaseTable;
  readonly asked: boolean;
  answer(): void;
} {
  let answer: (() => void) | undefined;
  return {
    table: {
      holder: leases.holder,
      async hold(key, ttlMs) {
        const held = await leases.hold(key, ttlMs);
        await new Promise<void>((resolve) => {
          answer = resolve;
        });
        return held;
      },
      release: (key) => leases.release(key),
    },
    get asked() {
      return answer !== undefined;
    },
    answer: () => answer?.(),
  };
}
