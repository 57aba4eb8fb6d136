/**
 * @module relay/channels/probabilities/relay
 * The `probabilities` channel's server part: one upstream request per poll for every market's entry,
 * however many subscribe; the same map is the books' change hints (`probabilitiesHints`, which
 * relay/channels/book/change-hint-target.ts reads), read once for both.
 */
import type {
  ProbabilitiesData,
  ProbabilitiesUpdateData,
  ProbabilityEntry,
} from '../../../../packages/protocol/src/channels/probabilities/probabilities.ts';
import type { JsonValue } from '../../../../packages/protocol/src/channels/records.ts';
import { diffRecord, fieldCount, sameJson } from '../../../../packages/protocol/src/channels/records.ts';
import { type ProbabilitiesResponse, probabilitiesResponse } from '../../../upstream/schemas.ts';
import type { ChangeHintMap, RelayChannel } from '../relay-definition.ts';

/** The channel's name, for the slices its map serves (the books' change hints, `candles` of probabilities). */
export const probabilitiesChannel = 'probabilities' as const;

/** The upstream call the channel polls with. */
export interface ProbabilitiesUpstream {
  probabilities(): Promise<ProbabilitiesResponse>;
}

/** The entries new or changed (whole), `null` for a market gone from the map. */
export function diffProbabilities(
  prev: ProbabilitiesData,
  next: ProbabilitiesData,
): ProbabilitiesUpdateData | null {
  return diffRecord(prev, next, sameProbability);
}

/** Fields an entry has beyond the named ones are upstream's too, and compared as JSON. */
function sameProbability(a: ProbabilityEntry, b: ProbabilityEntry): boolean {
  return (
    a.midpoint === b.midpoint &&
    a.best_bid === b.best_bid &&
    a.best_ask === b.best_ask &&
    a.last_trade_price === b.last_trade_price &&
    a.timestamp === b.timestamp &&
    ((fieldCount(a) === PROBABILITY_FIELDS && fieldCount(b) === PROBABILITY_FIELDS) ||
      sameJson(a as unknown as JsonValue, b as unknown as JsonValue))
  );
}

const PROBABILITY_FIELDS = 5;

export const probabilitiesRelay: RelayChannel<
  ProbabilitiesUpstream,
  ProbabilitiesData,
  ProbabilitiesUpdateData
> = {
  codec: { diff: diffProbabilities },
  polled: {
    schema: probabilitiesResponse,
    ask: (upstream) => upstream.probabilities(),
    /** Keyed by market id in its one spelling (lower case), as every other stream names markets. */
    stateOf: (response: ProbabilitiesResponse) => {
      const state: ProbabilitiesData = {};
      for (const [market, entry] of Object.entries(response.probabilities))
        state[market.toLowerCase()] = entry;
      return state;
    },
    // Entries carry their own times; the map as a whole has none.
    tsOf: () => undefined,
  },
};

/** The map as change hints: an entry moved when its time, prices or last trade did. */
export const probabilitiesHints: ChangeHintMap<
  ProbabilitiesUpstream,
  ProbabilitiesResponse,
  ProbabilityEntry
> = {
  ask: (upstream) => upstream.probabilities(),
  *entries({ probabilities }) {
    for (const [market, entry] of Object.entries(probabilities)) yield [market.toLowerCase(), entry] as const;
  },
  fingerprint: (entry) =>
    `${entry.timestamp}|${entry.midpoint}|${entry.best_bid}|${entry.best_ask}|${entry.last_trade_price}`,
};
