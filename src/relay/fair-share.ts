/**
 * @module relay/fair-share
 * How much of the upstream budget each poll target deserves, from who wants it. A target several
 * connections want weighs as many connections; the targets that one connection alone wants share
 * one connection's weight between them. So a connection with a thousand private targets gets the
 * budget of one connection, not of a thousand, and can never starve the targets others share
 * (docs/scheduler.md "Fair share"). Pure: owners are any values compared by identity.
 */

export interface FairShare<K, O> {
  /** Target -> weight (> 0). */
  weights: Map<K, number>;
  /** Owner -> number of targets nobody else wants. */
  privateTargets: Map<O, number>;
}

export function fairShare<K, O>(ownersByTarget: ReadonlyMap<K, ReadonlySet<O>>): FairShare<K, O> {
  const privateTargets = new Map<O, number>();
  for (const owners of ownersByTarget.values()) {
    const only = soleOwner(owners);
    if (only !== undefined) privateTargets.set(only.owner, (privateTargets.get(only.owner) ?? 0) + 1);
  }
  const weights = new Map<K, number>();
  for (const [target, owners] of ownersByTarget) {
    const only = soleOwner(owners);
    // A target nobody holds any more (lingering for a reconnect) weighs like one private target.
    weights.set(
      target,
      only === undefined ? Math.max(1, owners.size) : 1 / (privateTargets.get(only.owner) ?? 1),
    );
  }
  return { weights, privateTargets };
}

function soleOwner<O>(owners: ReadonlySet<O>): { owner: O } | undefined {
  if (owners.size !== 1) return undefined;
  const [owner] = owners;
  return { owner: owner as O };
}
