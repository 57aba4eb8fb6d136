/**
 * @module relay/coordination/redis/broker
 * The poller's side of cluster mode: who holds a target's lease, the cluster-wide streams of a
 * target (relay/coordination/redis/target-streams.ts: `book` and `price`, numbered once by the holder), and, for the
 * channels each relay numbers itself, sharing the holder's upstream response. Both arrive on the
 * target's one channel. A relay alone (the local coordinator) has no stream log: its targets number
 * their own streams through the local numbering (relay/coordination/local/numbering.ts), behind the same
 * interface, and nothing is encoded for a cluster.
 */
import type { PollCoordinator } from '../broker.ts';
import { LocalNumbering } from '../local/numbering.ts';
import { parseSharedResult, type SharedResult } from '../shared-result.ts';
import type { AppliedPoll, StreamNumbering } from '../stream-numbering.ts';
import type { ClusterCodec } from './codecs.ts';
import { isBatchPayload } from './stream-batch.ts';
import { type ClusterStreamContext, ClusterTarget } from './target-streams.ts';

/** A lease outlives a few missed renewals, but not a relay that died, for long. */
const DEFAULT_MIN_LEASE_MS = 2_000;
const LEASES_PER_INTERVAL = 3;

/** Who hears what arrives on one target's channel. */
interface Listeners {
  batch?: (payload: string) => void;
  result?: (result: SharedResult) => void;
}

export class ClusterShare {
  readonly #coordinator: PollCoordinator;
  readonly #clustered: boolean;
  readonly #minLeaseMs: number;
  readonly #listeners = new Map<string, Listeners>();

  constructor(coordinator: PollCoordinator, minLeaseMs = DEFAULT_MIN_LEASE_MS) {
    this.#coordinator = coordinator;
    this.#clustered = coordinator.status().mode !== 'local';
    this.#minLeaseMs = minLeaseMs;
  }

  /** Whether this relay polls `target` now; the lease lasts a few of its expected intervals. */
  claim(target: string, expectedIntervalMs: number): Promise<boolean> {
    // Whole milliseconds: Redis takes nothing else as a TTL.
    const ttlMs = Math.ceil(Math.max(this.#minLeaseMs, LEASES_PER_INTERVAL * expectedIntervalMs));
    return this.#coordinator.claim(target, ttlMs);
  }

  /**
   * How the streams of `target` are numbered: by this relay alone (relay/coordination/local/numbering.ts),
   * or once for the cluster by its lease holder, following what the holder writes (`onApplied`
   * hears of each poll of the holder's applied here).
   */
  streams<State, Delta>(
    target: string,
    market: string,
    codec: ClusterCodec<State, Delta>,
    context: Omit<ClusterStreamContext, 'log' | 'spent'>,
    onApplied: (poll: AppliedPoll) => void,
  ): StreamNumbering<State> {
    const log = this.#coordinator.log;
    if (log === undefined) return new LocalNumbering(market, codec, context);
    const spent = (ms: number) => this.#coordinator.spent(ms);
    const streams = new ClusterTarget(target, market, codec, { ...context, log, spent });
    this.#listen(target).batch = (payload) => {
      void streams.follow(payload).then((applied) => {
        if (applied !== undefined) onApplied(applied);
      });
    };
    // Streams new here start from the cluster's state rather than wait for the holder's next poll.
    void streams.catchUp();
    return streams;
  }

  /** Upstream responses the lease holder shares for `target`; malformed payloads are ignored. */
  follow(target: string, onResult: (result: SharedResult) => void): void {
    if (this.#clustered) this.#listen(target).result = onResult;
  }

  /** `result` is only built and encoded when other relays may follow `target`. */
  share(target: string, result: () => SharedResult): void {
    if (this.#clustered) this.#coordinator.share(target, JSON.stringify(result()));
  }

  /** No subscriber left here: stop following and hand the lease to another interested relay. */
  forget(target: string): void {
    this.#listeners.delete(target);
    this.#coordinator.unfollow(target);
    void this.#coordinator.release(target);
  }

  #listen(target: string): Listeners {
    let listeners = this.#listeners.get(target);
    if (listeners === undefined) {
      const created: Listeners = {};
      listeners = created;
      this.#listeners.set(target, created);
      this.#coordinator.follow(target, (payload) => {
        if (isBatchPayload(payload)) created.batch?.(payload);
        else {
          const result = parseSharedResult(payload);
          if (result !== undefined) created.result?.(result);
        }
      });
    }
    return listeners;
  }
}
