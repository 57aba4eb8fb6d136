/**
 * @module relay/poll/fair-share
 * How much of the upstream budget each poll target deserves, from who wants it. A target several
 * connections want weighs as many connections; the targets that one connection alone wants share
 * one connection's weight between them. So a connection with a thousand private targets gets the
 * budget of one connection, not of a thousand, and can never starve the targets others share
 * (docs/scheduler.md "Fair share"). The owner of a connection with an API key is its key, so the
 * targets only one key's connections want share one weight too, however many connections the key
 * opens. Pure: owners are any values compared by identity.
 */

/** Who wants a target: how many subscriptions, and the one owner when all are the same. */
export interface Interest<O> {
  subscriptions: number;
  soleOwner: O | undefined;
}

export interface FairShare<K, O> {
  /** Target -> weight (> 0). */
  weights: Map<K, number>;
  /** Owner -> number of targets nobody else wants. */
  privateTargets: Map<O, number>;
}

/** Sums up the owners of a target, stopping at the second distinct one for the sole owner. */
export function interestOf<O>(owners: Iterable<O>): Interest<O> {
  let subscriptions = 0;
  let first: O | undefined;
  let shared = false;
  for (const owner of owners) {
    subscriptions += 1;
    if (subscriptions === 1) first = owner;
    else if (owner !== first) shared = true;
  }
  return { subscriptions, soleOwner: shared ? undefined : first };
}

export function fairShare<K, O>(interest: ReadonlyMap<K, Interest<O>>): FairShare<K, O> {
  const privateTargets = new Map<O, number>();
  for (const { soleOwner } of interest.values()) {
    if (soleOwner !== undefined) privateTargets.set(soleOwner, (privateTargets.get(soleOwner) ?? 0) + 1);
  }
  const weights = new Map<K, number>();
  for (const [target, { subscriptions, soleOwner }] of interest) {
    // A target nobody holds any more (lingering for a reconnect) weighs like one private target.
    weights.set(
      target,
      soleOwner === undefined ? Math.max(1, subscriptions) : 1 / (privateTargets.get(soleOwner) ?? 1),
    );
  }
  return { weights, privateTargets };
}
