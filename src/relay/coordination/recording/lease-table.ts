/**
 * @module relay/coordination/recording/lease-table
 * Where the recording leases live (docs/cluster.md "One history for the cluster"): one lease per
 * stream a relay numbers itself, with an expiry, taken by the relay that records the stream into
 * the store the cluster shares. Redis in a cluster (./redis-lease-table.ts); the contract test runs
 * the same cases against an in-memory table too.
 */

export interface LeaseTable {
  /** This relay's name in the table: what a lease it holds says. */
  readonly holder: string;
  /**
   * Takes the lease of `key` for `ttlMs` when nobody holds it, or renews it for `ttlMs` when this
   * relay does: whether this relay holds it now. Rejects when the table cannot be reached.
   */
  hold(key: string, ttlMs: number): Promise<boolean>;
  /** Lets the lease of `key` go when this relay holds it. Rejects when the table cannot be reached. */
  release(key: string): Promise<void>;
}
