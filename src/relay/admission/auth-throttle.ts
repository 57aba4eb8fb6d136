/**
 * @module relay/admission/auth-throttle
 * Wrong API keys, per address group (docs/operations.md "Refusals"), as pure state over an injectable
 * clock. The first `freeFailures` of a group are answered at once; each further one is answered a
 * little later (100 ms more per failure, at most 2 s), so a script guessing in sequence slows down;
 * at `lockoutFailures` the group is locked out for `lockoutMs`: every attempt gets 429 without its
 * key being looked at, so guessing in parallel learns nothing either. Failures are forgiven at
 * `freeFailures` per `lockoutMs`, so a client that mistyped its key a few times is never locked out,
 * and a lockout that ended leaves the group close to the next one. Other groups are not affected, and
 * a valid key is never slowed before the lockout. At most `maxGroups` groups are remembered: past
 * that, the one whose last failure is oldest is forgotten, so addresses without end cost bounded memory.
 */

export interface AuthThrottleLimits {
  freeFailures: number;
  lockoutFailures: number;
  lockoutMs: number;
  maxGroups: number;
}

/** `check`: look at the key (answer a wrong one after `delayMs`); `locked`: 429, retry after. */
export type AuthVerdict = { kind: 'check' } | { kind: 'locked'; retryAfterMs: number };

const DELAY_STEP_MS = 100;
const MAX_DELAY_MS = 2_000;

interface Failures {
  count: number;
  at: number;
  lockedUntil: number;
}

export class AuthThrottle {
  readonly #limits: AuthThrottleLimits;
  readonly #now: () => number;
  readonly #groups = new Map<string, Failures>();

  constructor(limits: AuthThrottleLimits, now: () => number = () => performance.now()) {
    this.#limits = limits;
    this.#now = now;
  }

  /** Before looking at a key presented from `group`. */
  verdict(group: string): AuthVerdict {
    const failures = this.#groups.get(group);
    const now = this.#now();
    if (failures === undefined || failures.lockedUntil <= now) return { kind: 'check' };
    return { kind: 'locked', retryAfterMs: failures.lockedUntil - now };
  }

  /**
   * A wrong key from `group`: how long to wait before answering it, and whether this failure
   * started a lockout.
   */
  failed(group: string): { delayMs: number; lockedOut: boolean } {
    const now = this.#now();
    const failures = this.#decayed(group, now);
    failures.count += 1;
    // Map order is then the order of last failures: the first entry is the one to forget.
    this.#groups.delete(group);
    this.#groups.set(group, failures);
    const { freeFailures, lockoutFailures, lockoutMs } = this.#limits;
    const lockedOut = failures.count >= lockoutFailures;
    if (lockedOut) failures.lockedUntil = now + lockoutMs;
    const over = failures.count - freeFailures;
    return { delayMs: over <= 0 ? 0 : Math.min(MAX_DELAY_MS, over * DELAY_STEP_MS), lockedOut };
  }

  /** Forgets groups with nothing left to remember. */
  prune(): void {
    const now = this.#now();
    for (const [group, failures] of this.#groups) {
      if (failures.lockedUntil <= now && this.#decayed(group, now).count <= 0) this.#groups.delete(group);
    }
  }

  get trackedGroups(): number {
    return this.#groups.size;
  }

  #decayed(group: string, now: number): Failures {
    let failures = this.#groups.get(group);
    if (failures === undefined) {
      if (this.#groups.size >= this.#limits.maxGroups) this.#forgetOldest();
      failures = { count: 0, at: now, lockedUntil: 0 };
      this.#groups.set(group, failures);
      return failures;
    }
    // Forgiven from the end of a lockout on, not during it.
    const since = Math.max(failures.at, failures.lockedUntil);
    if (now > since) {
      const forgiven = ((now - since) * this.#limits.freeFailures) / this.#limits.lockoutMs;
      failures.count = Math.max(0, failures.count - forgiven);
      failures.at = now;
    }
    return failures;
  }

  #forgetOldest(): void {
    const oldest = this.#groups.keys().next();
    if (oldest.done !== true) this.#groups.delete(oldest.value);
  }
}
