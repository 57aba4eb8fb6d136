/**
 * @module channels/probabilities/probabilities
 * The `probabilities` channel's Node-free part (docs/protocol.md "`probabilities` data"): upstream's
 * probability entry of every market in one map, the channel's one stream {@link PROBABILITIES_STREAM}.
 * An update carries the entries that changed (whole) and `null` for the markets that left the map.
 */
import { type FieldTypes, hasFields } from '../../util/field-checks.ts';
import type { ChannelDefinition } from '../definition.ts';
import { applyRecordUpdate } from '../records.ts';

/** Upstream's probability entry for one market (numbers, as upstream sends them). */
export interface ProbabilityEntry {
  midpoint: number;
  best_bid: number;
  best_ask: number;
  last_trade_price: number;
  timestamp: string;
}
/** Snapshot: every market's entry, keyed by market UUID. */
export type ProbabilitiesData = Record<string, ProbabilityEntry>;
/** Update: the entries that changed (whole entry) and, as `null`, the markets that left the map. */
export type ProbabilitiesUpdateData = Record<string, ProbabilityEntry | null>;

/** The channel's one stream: every market's entry in one map. */
export const PROBABILITIES_STREAM = 'all';

/** Changed entries replace the old ones whole; a market sent as `null` left the map. */
export function applyProbabilitiesUpdate(
  state: ProbabilitiesData,
  update: ProbabilitiesUpdateData,
): ProbabilitiesData {
  return applyRecordUpdate(state, update);
}

const probabilityFields: FieldTypes = {
  midpoint: 'number',
  best_bid: 'number',
  best_ask: 'number',
  last_trade_price: 'number',
  timestamp: 'string',
};

export const probabilities: ChannelDefinition<ProbabilitiesData, ProbabilitiesUpdateData> = {
  streamIds: {
    kind: 'all',
    canonical: (id) => (id === PROBABILITIES_STREAM ? id : undefined),
    expected: `the probabilities channel has one stream: "${PROBABILITIES_STREAM}"`,
  },
  apply: applyProbabilitiesUpdate,
  upstreamGet: '/api/markets/probabilities',
  dataProblem: ({ data }, snapshot) =>
    Object.values(data).every((entry) => (!snapshot && entry === null) || hasFields(entry, probabilityFields))
      ? undefined
      : 'probability entries',
};
