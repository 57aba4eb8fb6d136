/**
 * @module relay/coordination/redis/leases/relay-weight
 * How much of the cluster's polling a relay asks for (docs/cluster.md "How leases move"): its
 * weight in rendezvous hashing (relay/coordination/redis/leases/rendezvous.ts), from the poll CPU it and the cluster
 * announce. A relay whose leases cost more CPU each than the cluster's average (it holds the busy
 * books, or runs on a slower machine) lowers its weight and so holds fewer leases; with weights
 * inversely proportional to the cost per lease, every relay's expected poll CPU is the same.
 *
 * Each relay computes only its own weight and announces it; every relay then reads the same
 * weights from the roster, so all agree on who should hold what. The cost per lease barely changes
 * when a relay gives random targets away, so the weight does not feed back on itself; smoothing and
 * a dead band keep measurement noise from moving leases back and forth.
 */

/** Bounds of a weight: a relay never asks for less than half, nor more than twice, an even share. */
export const MIN_WEIGHT = 0.5;
export const MAX_WEIGHT = 2;
/** How far each announcement moves the smoothed weight toward the one measured (0..1). */
const SMOOTHING = 0.2;
/** The announced weight changes only once the smoothed one is more than this far from it. */
const DEAD_BAND = 0.25;

export interface RelayWeight {
  /** The weight announced, used by every relay. */
  weight: number;
  /** The smoothed measure the announced weight follows. */
  smoothed: number;
}

export const EVEN_WEIGHT: RelayWeight = { weight: 1, smoothed: 1 };

/** Poll CPU (any unit, the same for both) and leases held, of one relay or of the whole cluster. */
export interface PollCost {
  pollCpu: number;
  leases: number;
}

/**
 * The weight after one announcement: toward the cluster's CPU per lease divided by this relay's,
 * bounded. Without evidence (no leases or no CPU measured, here or in the cluster) it stays.
 */
export function nextWeight(previous: RelayWeight, own: PollCost, cluster: PollCost): RelayWeight {
  if (!(own.leases > 0 && own.pollCpu > 0 && cluster.leases > 0 && cluster.pollCpu > 0)) return previous;
  const ratio = cluster.pollCpu / cluster.leases / (own.pollCpu / own.leases);
  // Costs too small to divide (0 / 0): no evidence either.
  if (Number.isNaN(ratio)) return previous;
  const measured = clamp(ratio);
  const smoothed = clamp(previous.smoothed + SMOOTHING * (measured - previous.smoothed));
  const moved = Math.abs(smoothed - previous.weight) > DEAD_BAND * previous.weight;
  // Two decimals: what is announced reads back the same on every relay.
  return { weight: moved ? Math.round(smoothed * 100) / 100 : previous.weight, smoothed };
}

/**
 * A relay's poll CPU and the leases it held while spending it, over the window since the last
 * announcement. The leases are their mean over the window, not the count at its end: a relay that
 * handed leases over mid-window spent its CPU on more leases than it holds now, and dividing by the
 * count would make its leases look costlier, lower its weight, and hand more over (the weights fed
 * back on themselves, and leases flapped between relays).
 */
export class PollCostMeter {
  #cpuMs = 0;
  #leaseMs = 0;
  #leases = 0;
  #heldSince: number;
  #windowStart: number;

  constructor(now = performance.now()) {
    this.#heldSince = now;
    this.#windowStart = now;
  }

  spent(ms: number): void {
    this.#cpuMs += ms;
  }

  /** The relay holds `leases` from `now` on. */
  holding(leases: number, now = performance.now()): void {
    this.#leaseMs += this.#leases * (now - this.#heldSince);
    this.#leases = leases;
    this.#heldSince = now;
  }

  /** The window's poll CPU (ms per 1,000 s) and mean leases held; the next window starts now. */
  take(now = performance.now()): PollCost {
    this.holding(this.#leases, now);
    const elapsed = Math.max(1, now - this.#windowStart);
    const cost = {
      pollCpu: Math.round((this.#cpuMs * 1_000_000) / elapsed),
      leases: this.#leaseMs / elapsed,
    };
    this.#cpuMs = 0;
    this.#leaseMs = 0;
    this.#windowStart = now;
    return cost;
  }
}

/** A weight read from the roster: a relay that announces none or nonsense counts as even. */
export function parseWeight(text: string | undefined): number {
  const weight = Number(text);
  return Number.isFinite(weight) && weight > 0 ? clamp(weight) : 1;
}

function clamp(weight: number): number {
  return Math.min(MAX_WEIGHT, Math.max(MIN_WEIGHT, weight));
}
