/**
 * @module relay/poll/scheduler
 * The pure core of polling: given every poll target (an order book, a batch of 100 prices, the
 * change-hint map, any channel to come) and the moment, which ones to ask upstream for next. The
 * caller owns the budget (how many requests it may start now) and the I/O; this module only ranks.
 * How it decides is documented, with a worked example, in docs/scheduler.md.
 *
 * Two classes, highest first:
 * 1. **due for its maximum age**: not confirmed for nearly `maxAgeMs` — every stream is confirmed at
 *    least that often whatever the hints say (a change deep in a book moves no hint);
 * 2. **everything else** allowed again (its `minIntervalMs` has passed), ranked by the freshness a
 *    request buys: `weight x expected delay of the changes not yet seen`. A target never asked yet
 *    (a subscriber waits for its first snapshot) counts its whole wait, ten times over.
 * Within a class the larger score goes first; `round-robin` mode ranks class 2 by time since the last
 * request instead (every target alike), which is the behaviour before hints and change rates. Which
 * group's targets are ranked for the next request is relay/poll/share-groups.ts's choice, so no
 * client address or API key can starve another whatever it holds.
 */

export type SchedulerMode = 'freshness' | 'round-robin';
export const schedulerModes: readonly SchedulerMode[] = ['freshness', 'round-robin'];

export interface TargetTiming {
  /** Never asked again sooner than this after the previous request (ms). */
  minIntervalMs: number;
  /** Confirmed at least this often whatever else wants the budget (ms). */
  maxAgeMs: number;
}

/** What the scheduler needs to know of one target at one moment (relay clock, ms). */
export interface TargetView<K> {
  key: K;
  timing: TargetTiming;
  /** When the target appeared (subscription time). */
  addedAt: number;
  /** When the last request for it was sent; undefined before the first. */
  lastAskedAt: number | undefined;
  /** When its state was last confirmed by a response; undefined before the first. */
  confirmedAt: number | undefined;
  /** A request for it is in flight: never ask twice at once. */
  inFlight: boolean;
  /** It holds something never asked for yet (a new book, a market new to a price batch). */
  awaitingFirstAsk: boolean;
  /** How much it counts among its groups' targets: the number of share groups holding it (>= 1). */
  weight: number;
  /** Estimated upstream changes per second (relay/poll/scheduler.ts `changeRateAfter`). */
  changeRate: number;
  /**
   * When a cheap hint (a price batch, the change-hint map) says it moved after the last request: the
   * estimated time of the move (midway between the hint read that showed it and the one before).
   */
  hintedAt: number | undefined;
  /**
   * When the last hint read that would have shown a move of this target was asked (undefined: no
   * hint covers it). Changes before then without a hint were deep in the book, if any.
   */
  coveredAt?: number | undefined;
  /** Upstream answered 429 with `Retry-After`: it is not asked again before this time. */
  retryAt?: number | undefined;
}

/** The share of a book's changes that no hint shows (deep in the book): a guess, kept small. */
const UNHINTED_SHARE = 0.01;

/**
 * Class 1 starts this long before the maximum age, so that the response arrives in time even when
 * many targets come due together: a twentieth of the maximum age, at least the minimum interval
 * and a second, at most a quarter of the maximum age.
 */
export function deadlineSlackMs(timing: TargetTiming): number {
  return Math.min(timing.maxAgeMs / 4, Math.max(timing.minIntervalMs, 1_000, timing.maxAgeMs / 20));
}

const DEADLINE = 2;
const FRESHNESS = 1;
/** A subscriber without any snapshot is worse off than one with an old one. */
const FIRST_ASK_FACTOR = 10;

export interface Ranked<K> {
  key: K;
  rank: number;
  score: number;
  /** Time since its last confirmation: of two equal scores, the older goes first. */
  age: number;
}

/**
 * The class and score of one target now; undefined when it must not be asked now (most targets on
 * most turns: nothing is allocated for them).
 */
export function rankOf<K>(target: TargetView<K>, now: number, mode: SchedulerMode): Ranked<K> | undefined {
  if (target.inFlight) return undefined;
  if (target.retryAt !== undefined && now < target.retryAt) return undefined;
  const { key, timing } = target;
  const sinceAsked = target.lastAskedAt === undefined ? Number.POSITIVE_INFINITY : now - target.lastAskedAt;
  if (!target.awaitingFirstAsk && sinceAsked < timing.minIntervalMs) return undefined;
  const age = now - (target.confirmedAt ?? target.addedAt);
  if (target.awaitingFirstAsk)
    return {
      key,
      rank: FRESHNESS,
      score: target.weight * FIRST_ASK_FACTOR * (age + timing.minIntervalMs),
      age,
    };
  if (age + deadlineSlackMs(timing) >= timing.maxAgeMs)
    return { key, rank: DEADLINE, score: age / timing.maxAgeMs, age };
  if (mode === 'round-robin') return { key, rank: FRESHNESS, score: target.weight * sinceAsked, age };
  return { key, rank: FRESHNESS, score: target.weight * unseenDelayMs(target, now, sinceAsked), age };
}

/** Expected delay of the changes not yet seen, using what hints said (and did not say). */
function unseenDelayMs<K>(target: TargetView<K>, now: number, sinceAsked: number): number {
  if (target.hintedAt !== undefined) return Math.max(0, now - target.hintedAt);
  const all = expectedUnseenDelayMs(target.changeRate, sinceAsked);
  const { coveredAt, lastAskedAt } = target;
  if (coveredAt === undefined || lastAskedAt === undefined || coveredAt <= lastAskedAt) return all;
  // Up to `coveredAt` a hint would have shown most changes and showed none.
  const uncovered = expectedUnseenDelayMs(target.changeRate, now - coveredAt);
  return uncovered + UNHINTED_SHARE * (all - uncovered);
}

/**
 * The targets to ask now, best first, at most `slots` of them. Equal scores go to the longer
 * unconfirmed, then to the key order of the input, so a result is deterministic for a given input.
 */
export function pickTargets<K>(
  targets: Iterable<TargetView<K>>,
  now: number,
  slots: number,
  mode: SchedulerMode,
): K[] {
  if (slots <= 0) return [];
  // The best `slots` so far, best first. A turn usually has a slot or two for hundreds of targets
  // (all of them due when the budget is short): keeping the few best is linear, sorting all is not.
  const best: Ranked<K>[] = [];
  for (const target of targets) {
    const ranked = rankOf(target, now, mode);
    if (ranked === undefined) continue;
    if (best.length === slots && !before(ranked, best[slots - 1]!)) continue;
    // After every equal one already kept: of equals, the earlier in the input goes first.
    let at = best.length;
    while (at > 0 && before(ranked, best[at - 1]!)) at--;
    best.splice(at, 0, ranked);
    if (best.length > slots) best.pop();
  }
  return best.map((ranked) => ranked.key);
}

/** Whether `a` goes strictly before `b`: higher class, then higher score, then older. */
function before<K>(a: Ranked<K>, b: Ranked<K>): boolean {
  return (b.rank - a.rank || b.score - a.score || b.age - a.age) < 0;
}

/**
 * Expected total delay (ms) of the changes made since the last request, for a target changing at
 * `ratePerSecond` as a Poisson process, `sinceMs` after that request: the integral of P(changed)
 * over the time since, `t - (1 - e^(-λt)) / λ`. It grows like `λt²/2` for a quiet target and like
 * `t - 1/λ` for a busy one, so a busy book is asked far sooner than a quiet one.
 */
export function expectedUnseenDelayMs(ratePerSecond: number, sinceMs: number): number {
  if (!Number.isFinite(sinceMs)) return Number.MAX_VALUE;
  const lambda = ratePerSecond / 1000;
  if (lambda <= 0 || sinceMs <= 0) return 0;
  const x = lambda * sinceMs;
  // For a tiny λt the closed form cancels badly; its series is exact enough there.
  if (x < 1e-6) return (lambda * sinceMs * sinceMs) / 2;
  return sinceMs - -Math.expm1(-x) / lambda;
}

/** What a target's polls have shown about its change rate, decayed so it follows the market. */
export interface ChangeHistory {
  /** Decayed fraction of polls that found a change. */
  changedShare: number;
  /** Decayed mean time between those polls (ms). */
  meanGapMs: number;
}

/** Before any poll: a change about every ten seconds. */
export const initialChangeHistory: ChangeHistory = { changedShare: 0.5, meanGapMs: 6_931 };

const HISTORY_DECAY = 0.8;
/** A target seen changing on every poll is still estimated as finite. */
const MAX_CHANGED_SHARE = 0.95;

/** The history after one more poll that did (or did not) find a change, `gapMs` after the previous. */
export function changeHistoryAfter(history: ChangeHistory, changed: boolean, gapMs: number): ChangeHistory {
  const gap = Number.isFinite(gapMs) && gapMs > 0 ? gapMs : history.meanGapMs;
  return {
    changedShare: HISTORY_DECAY * history.changedShare + (1 - HISTORY_DECAY) * (changed ? 1 : 0),
    meanGapMs: HISTORY_DECAY * history.meanGapMs + (1 - HISTORY_DECAY) * gap,
  };
}

/**
 * Changes per second: if a share p of polls `g` ms apart saw a change, a Poisson rate λ with
 * `1 - e^(-λg) = p` explains it, so `λ = -ln(1 - p) / g`.
 */
export function changeRateOf(history: ChangeHistory): number {
  const share = Math.min(MAX_CHANGED_SHARE, Math.max(0, history.changedShare));
  return (-Math.log1p(-share) / history.meanGapMs) * 1000;
}
