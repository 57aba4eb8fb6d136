/**
 * @module relay/poll/not-found
 * When a failed poll is upstream saying "this market (or feed) does not exist", decided only from
 * what upstream's interface defines (docs/upstream.md "Open choices and simulator profiles"), never
 * from an error body, whose shape is not shown:
 * - upstream is upstream: its `/health` answered with upstream's shape (relay/poll/upstream-health.ts);
 * - it refused the id, with a 404 (the CLOB's "market not found") or a 400 (the status of an unknown
 *   id on `/api/...` is not shown; the relay only sends ids of the right form, so a 400 is about the
 *   id itself);
 * - and either the same path answered 2xx for other ids since upstream was verified (so the path is
 *   right and this id is what upstream refuses), or the id is a market the complete catalogue does
 *   not list (relay/admission/known-markets.ts), or, for a feed or a `rest` path (no catalogue
 *   lists feeds or users), the service the path belongs to (`/api`, one of the interface's two with
 *   `/clob`) answered 2xx.
 * Anything else (a wrong base path, a proxy's 404, a path that never answered) is a failed poll:
 * the stream turns stale and keeps being asked for.
 */
import type { StreamIdKind } from '../../../packages/protocol/src/channels/definition.ts';
import { UpstreamHttpError } from '../../upstream/errors.ts';
import type { CatalogueVerdict } from '../admission/known-markets.ts';
import { MARKET_IDS } from '../channels/relay-registry.ts';

/** What the relay has seen of upstream, the evidence a verdict rests on. */
export interface UpstreamEvidence {
  /** Upstream's `/health` answered with upstream's shape, the last time it answered at all. */
  readonly verified: boolean;
  /** `endpoint` (a route template) answered 2xx since upstream was verified. */
  answers(endpoint: string): boolean;
  /** An endpoint of the same service (`/api` or `/clob`) as `endpoint` answered 2xx since then. */
  serviceAnswers(endpoint: string): boolean;
}

export interface MarketCatalogue {
  readonly loadsBegun: number;
  verdict(market: string, since?: number): CatalogueVerdict;
  /** A load ahead of the schedule, rate-limited by the catalogue itself. */
  loadSoon(): void;
}

/** An id a poll target polls, by its kind (protocol/channels.ts `streamIdKinds`): one thing upstream may not have. */
export interface PolledId {
  kind: Exclude<StreamIdKind, 'all' | 'catalogue' | 'of-market'>;
  value: string;
}

/** A market's id as a poll target names it. */
export function marketId(value: string): PolledId {
  return { kind: MARKET_IDS, value };
}

/** What a poll target asks about an id it polls. */
export interface ExistenceJudge {
  /** Whether `error`, from polling `id`, means upstream does not have it. */
  isGone(error: unknown, id: PolledId): boolean;
  /** What a market's stream notes when it begins, for `bareEntry` to judge it by later. */
  catalogueLoads(): number;
  /**
   * What a price-batch entry without prices says of `market` (upstream may answer an id that is no
   * market so; not shown): `no_market` when the complete catalogue does not list it, read by a load
   * begun after `since` (`catalogueLoads()` when the market's stream began); `undecided` when only
   * an older list lacks it, which may predate a market new upstream (a later load decides, brought
   * forward at most one per catalogue's gap whatever the ids); else `unpriced_market`, a market
   * without price data.
   */
  bareEntry(market: string, since: number): BareEntry;
}

export type BareEntry = 'unpriced_market' | 'no_market' | 'undecided';

export class NotFoundJudge implements ExistenceJudge {
  readonly #upstream: UpstreamEvidence;
  readonly #catalogue: MarketCatalogue | undefined;

  constructor(upstream: UpstreamEvidence, catalogue?: MarketCatalogue) {
    this.#upstream = upstream;
    this.#catalogue = catalogue;
  }

  isGone(error: unknown, id: PolledId): boolean {
    if (!isRefusedId(error) || !this.#upstream.verified) return false;
    if (this.#upstream.answers(error.endpoint)) return true;
    if (id.kind !== MARKET_IDS) return this.#upstream.serviceAnswers(error.endpoint);
    // Upstream refused the id itself: any complete list without it says the path is not at fault.
    return this.#catalogue?.verdict(id.value) === 'not_listed';
  }

  catalogueLoads(): number {
    return this.#catalogue?.loadsBegun ?? 0;
  }

  bareEntry(market: string, since: number): BareEntry {
    if (!this.#upstream.verified) return 'unpriced_market';
    const verdict = this.#catalogue?.verdict(market, since);
    if (verdict === 'not_listed') return 'no_market';
    if (verdict !== 'not_listed_earlier') return 'unpriced_market';
    this.#catalogue?.loadSoon();
    return 'undecided';
  }
}

/**
 * A refusal of the id a request named: a 404 or 400 on an endpoint about one id. A 404 on an
 * endpoint about no id, and an answer that came through another relay, carry `upstream_unavailable`.
 */
export function isRefusedId(error: unknown): error is UpstreamHttpError {
  return (
    error instanceof UpstreamHttpError &&
    (error.status === 404 || error.status === 400) &&
    error.code !== 'upstream_unavailable'
  );
}

/** For a pool without upstream evidence (unit tests): every refused id is gone. */
export const trustingJudge: ExistenceJudge = {
  isGone: (error) => isRefusedId(error),
  catalogueLoads: () => 0,
  bareEntry: () => 'unpriced_market',
};
