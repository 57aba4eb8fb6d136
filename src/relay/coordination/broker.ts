/**
 * @module relay/coordination/broker
 * Who polls what. In cluster mode (docs/operations.md `--redis`) several relays serve the same markets
 * but upstream is polled once per market: the relay holding a market's lease polls it and writes
 * each poll's messages to the stream log once for the cluster; the others follow. A single relay is
 * the degenerate case: it owns everything, numbers its own streams and shares with nobody. The
 * poller pool speaks only to this interface.
 */
import type { StreamLog } from './redis/stream-log.ts';

export interface CoordinatorStatus {
  mode: 'local' | 'redis';
  /** Redis reachable (always true for a single relay). */
  connected: boolean;
  /** Poll targets this relay holds the lease of. */
  owned: number;
  /** Poll targets this relay follows (results shared by the lease holder). */
  followed: number;
  lastError: string | undefined;
  /** Cluster mode: the live relays as of this relay's last announcement (docs/cluster.md "How leases move"). */
  relays?: number;
  /** Cluster mode: this relay's share (0..1) of the leases all live relays hold, as they last announced them. */
  leaseShare?: number;
  /**
   * Cluster mode: this relay's share (0..1) of the CPU all live relays spent numbering their polls
   * (diffs, checksums, messages) over their last announcement period.
   */
  pollCpuShare?: number;
}

export interface PollCoordinator {
  /**
   * Whether this relay should poll `target` now: it holds the lease, or just took it. Renews a
   * held lease for `ttlMs`. Never throws: when the coordinator cannot tell (Redis down) it answers
   * true, so that data keeps flowing at the cost of duplicate upstream polls.
   */
  claim(target: string, ttlMs: number): Promise<boolean>;
  /** Gives `target` up (no subscriber left here), so another interested relay takes over at once. */
  release(target: string): Promise<void>;
  /** Cluster-wide streams (relay/coordination/redis/stream-log.ts); undefined for a relay alone. */
  readonly log: StreamLog | undefined;
  /**
   * Publishes `payload` to the relays that follow `target`: the holder's upstream response, for the
   * channels whose streams each relay numbers itself.
   */
  share(target: string, payload: string): void;
  /** CPU time (ms) this relay spent numbering one poll of a target it holds, for its poll CPU share. */
  spent(ms: number): void;
  /**
   * Receives what the holder of `target` writes (relay/coordination/redis/stream-batch.ts) or shares, as JSON; never
   * what this relay sent.
   */
  follow(target: string, onPayload: (payload: string) => void): void;
  unfollow(target: string): void;
  status(): CoordinatorStatus;
  close(): Promise<void>;
}

/** One relay alone: it owns every target and has nobody to share with. */
export class LocalCoordinator implements PollCoordinator {
  readonly #owned = new Set<string>();
  readonly log = undefined;

  async claim(target: string): Promise<boolean> {
    this.#owned.add(target);
    return true;
  }
  async release(target: string): Promise<void> {
    this.#owned.delete(target);
  }
  share(): void {}
  spent(): void {}
  follow(): void {}
  unfollow(): void {}
  status(): CoordinatorStatus {
    return { mode: 'local', connected: true, owned: this.#owned.size, followed: 0, lastError: undefined };
  }
  async close(): Promise<void> {
    this.#owned.clear();
  }
}
