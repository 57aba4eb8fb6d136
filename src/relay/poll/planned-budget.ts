/**
 * @module relay/poll/planned-budget
 * The requests per second a relay's poller plans with (docs/cluster.md "One budget"): all of
 * `--upstream-rps` for a relay alone; in a cluster, this relay's share of it as Redis reports it.
 */

/**
 * A relay plans with at least this share of the cluster's budget: one whose peers spend it all has
 * a share near 0 and would otherwise never poll enough to learn a larger one (the shared bucket in
 * Redis still holds the cluster to the whole budget).
 */
const MIN_PLANNED_SHARE = 0.1;
/** A change of share smaller than this (of the whole budget) leaves the plan as it is. */
const REPLAN_SHARE_CHANGE = 0.1;

export class PlannedBudget {
  readonly #upstreamRps: number;
  readonly #share: (() => number | undefined) | undefined;
  #rps: number;

  /** `share`: this relay's share of the cluster's budget (0..1), undefined until known. */
  constructor(upstreamRps: number, share?: () => number | undefined) {
    this.#upstreamRps = upstreamRps;
    this.#share = share;
    this.#rps = upstreamRps;
  }

  get rps(): number {
    return this.#rps;
  }

  /** Follows the share; true when it moved enough that the poller must plan again. */
  update(): boolean {
    const share = this.#share?.();
    if (share === undefined) return false;
    const planned = this.#upstreamRps * Math.max(MIN_PLANNED_SHARE, share);
    if (Math.abs(planned - this.#rps) <= REPLAN_SHARE_CHANGE * this.#upstreamRps) return false;
    this.#rps = planned;
    return true;
  }
}
