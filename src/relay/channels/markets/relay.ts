/**
 * @module relay/channels/markets/relay
 * What the relay asks of the `markets` channel outside its folder: the catalogue stream that wildcards and
 * `--record` with `*` follow (upstream's list of active markets), and its bound on catalogue filters
 * per connection and per client address group (docs/operations.md "Isolation":
 * `--max-catalogue-filters` and `--max-catalogue-filters-per-address`).
 */
import type { IdBound } from '../relay-definition.ts';

/** The catalogue stream of every active market. */
export const activeCatalogue = { channel: 'markets', market: 'active' } as const;

/** The isolation limits of catalogue filters, in the relay's. */
export interface CatalogueGroupLimits {
  /** Distinct catalogue filters (`markets` streams), per connection and per address group. */
  maxCatalogueFilters: number;
  maxCatalogueFiltersPerAddress: number;
}

export const marketsBound: IdBound<'markets', CatalogueGroupLimits> = {
  channel: 'markets',
  noun: 'catalogue filters',
  perConnection: { field: 'maxCatalogueFilters', default: 10 },
  perAddress: { field: 'maxCatalogueFiltersPerAddress', default: 20 },
  // A filter naming a token (`all:3`) may name no token upstream; a status alone always exists.
  unconfirmed: (id) => id.includes(':'),
};
