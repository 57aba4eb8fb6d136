/**
 * @module channels/markets/wire
 * The `markets` channel's wire form (docs/protocol.md "`markets` data"): its data, how an update
 * applies (changed records replace the old ones whole; a market sent as `null` left the catalogue),
 * and what the generic code asks of it (channels/definition.ts `ChannelWire`): catalogue filters as stream ids, and upstream's
 * list-form records as received by market id, each an object (or, in an update, null for a market
 * gone).
 */
import { isObject } from '../../util/field-checks.ts';
import type { ChannelWire } from '../definition.ts';
import { applyRecordUpdate, type JsonValue } from '../records.ts';

/** `markets`: upstream's list-form market record as received, each field with upstream's type. */
export type MarketListRecord = Record<string, JsonValue>;
/** Snapshot: every market of the catalogue (across all its pages), keyed by market UUID. */
export type MarketsData = Record<string, MarketListRecord>;
/** Update: the records new or changed (whole) and, as `null`, the markets that left the catalogue. */
export type MarketsUpdateData = Record<string, MarketListRecord | null>;
export function applyMarketsUpdate(state: MarketsData, update: MarketsUpdateData): MarketsData {
  return applyRecordUpdate(state, update);
}

export const marketsWire: ChannelWire = {
  streamIds: { kind: 'catalogue' },
  dataProblem({ data }, snapshot) {
    if (!isObject(data)) return 'data';
    return Object.values(data).every((record) => (!snapshot && record === null) || isObject(record))
      ? undefined
      : 'market records';
  },
};
