/**
 * @module relay/cluster-share
 * The poller's side of cluster mode: who holds a target's lease, and sharing each result with the
 * relays that follow it. A result is encoded for the cluster only when there is a cluster: a single
 * relay (the local coordinator) shares with nobody, so it never serialises a book it just parsed.
 */
import type { PollCoordinator } from '../cluster/coordinator.ts';
import { parseSharedResult, type SharedResult } from '../cluster/shared-result.ts';

/** A lease outlives a few missed renewals, but not a relay that died, for long. */
const MIN_LEASE_MS = 2_000;
const LEASES_PER_INTERVAL = 3;

export class ClusterShare {
  readonly #coordinator: PollCoordinator;
  readonly #clustered: boolean;

  constructor(coordinator: PollCoordinator) {
    this.#coordinator = coordinator;
    this.#clustered = coordinator.status().mode !== 'local';
  }

  /** Whether this relay polls `target` now; the lease lasts a few of its expected intervals. */
  claim(target: string, expectedIntervalMs: number): Promise<boolean> {
    return this.#coordinator.claim(target, Math.max(MIN_LEASE_MS, LEASES_PER_INTERVAL * expectedIntervalMs));
  }

  /** Results the lease holder shares for `target`; malformed payloads are ignored. */
  follow(target: string, onResult: (result: SharedResult) => void): void {
    if (!this.#clustered) return;
    this.#coordinator.follow(target, (payload) => {
      const result = parseSharedResult(payload);
      if (result !== undefined) onResult(result);
    });
  }

  /** No subscriber left here: stop following and hand the lease to another interested relay. */
  forget(target: string): void {
    this.#coordinator.unfollow(target);
    void this.#coordinator.release(target);
  }

  /** `result` is only built and encoded when other relays may follow `target`. */
  share(target: string, result: () => SharedResult): void {
    if (this.#clustered) this.#coordinator.share(target, JSON.stringify(result()));
  }
}
