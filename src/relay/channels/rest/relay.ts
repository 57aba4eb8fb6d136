/**
 * @module relay/channels/rest/relay
 * What the relay's admission asks of the `rest` channel (docs/operations.md "Isolation"): its
 * distinct paths are bounded per connection and per client address group by `--max-rest-paths`
 * and `--max-rest-paths-per-address`, and upstream has answered none of them until a poll has.
 */
import type { IdBound } from '../relay-definition.ts';

/** The isolation limits of `rest` paths, in the relay's. */
export interface RestGroupLimits {
  /** Distinct `rest` paths one connection holds, and one address group's connections together. */
  maxRestPaths: number;
  maxRestPathsPerAddress: number;
}

export const restBound: IdBound<'rest', RestGroupLimits> = {
  channel: 'rest',
  noun: 'rest paths',
  perConnection: { field: 'maxRestPaths', default: 100 },
  perAddress: { field: 'maxRestPathsPerAddress', default: 200 },
  // Any path may name nothing upstream: a user, a search, a page.
  unconfirmed: () => true,
};
