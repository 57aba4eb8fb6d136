/**
 * @module channels/oracle/oracle
 * The `oracle` channel's Node-free part (docs/protocol.md "`oracle` data"): one upstream feed's
 * latest parsed price, a stream per feed id. Snapshot and update both carry the whole record.
 */

import { type FieldTypes, hasFields } from '../../util/field-checks.ts';
import type { ChannelDefinition } from '../definition.ts';

/** One feed's latest parsed price. */
export interface OracleData {
  feed_id: string;
  price: number;
  raw_price: string;
  expo: number;
  publish_time: number;
}

/** Feed ids (the stream ids): `0x` and hex digits, either case. */
export const FEED_ID_PATTERN = /^0x[0-9a-fA-F]{1,128}$/;

/** An update carries the whole record. */
export function applyOracleUpdate(_state: OracleData, update: OracleData): OracleData {
  return update;
}

const oracleFields: FieldTypes = {
  feed_id: 'string',
  price: 'number',
  raw_price: 'string',
  expo: 'number',
  publish_time: 'number',
};

export const oracle: ChannelDefinition<OracleData, OracleData> = {
  streamIds: {
    kind: 'feed',
    canonical: (id) => (FEED_ID_PATTERN.test(id) ? id.toLowerCase() : undefined),
    expected: 'not an oracle feed id (0x and hex digits)',
    noun: 'oracle feed',
  },
  apply: applyOracleUpdate,
  dataProblem: ({ data }) => (hasFields(data, oracleFields) ? undefined : 'oracle record'),
};
