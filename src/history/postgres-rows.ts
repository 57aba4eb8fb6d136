/**
 * @module history/postgres-rows
 * A recorded message as a row of the shared store's table (history/postgres-schema.ts) and back:
 * the envelope as columns, times as epoch milliseconds with the text as sent only where they do not
 * give it back, `data` as the JSON text sent.
 */
import type { RecordedMessage } from './store.ts';
import { storedTime } from './stored-time.ts';

/** The columns a read selects, numbers as float8 (exact: seq, times and checksums are integers below 2^53). */
export const COLUMNS =
  'channel, stream, market, depth, group_step, epoch, seq::float8 AS seq, ts_ms::float8 AS ts_ms, rts_ms::float8 AS rts_ms, ts_text, rts_text, type, data, checksum::float8 AS checksum';

/** A row of `history_messages` as written and read. */
export interface Row {
  channel: string;
  stream: string;
  market: string;
  depth: number | null;
  group_step: string | null;
  epoch: string;
  seq: number;
  ts_ms: number;
  rts_ms: number;
  ts_text: string | null;
  rts_text: string | null;
  type: string;
  data: string;
  checksum: number | null;
}

export function rowOf(record: RecordedMessage): Row {
  const ts = storedTime(record.ts);
  const rts = storedTime(record.rts);
  return {
    channel: record.channel,
    stream: record.stream,
    market: record.market,
    depth: record.depth ?? null,
    group_step: record.group ?? null,
    epoch: record.epoch,
    seq: record.seq,
    ts_ms: ts.ms,
    rts_ms: rts.ms,
    ts_text: ts.text ?? null,
    rts_text: rts.text ?? null,
    type: record.type,
    data: record.data,
    checksum: record.checksum ?? null,
  };
}

export function recordOf(row: Row): RecordedMessage {
  return {
    channel: row.channel,
    stream: row.stream,
    market: row.market,
    depth: row.channel !== 'book' ? undefined : row.depth,
    epoch: row.epoch,
    seq: row.seq,
    ts: row.ts_text ?? new Date(row.ts_ms).toISOString(),
    rts: row.rts_text ?? new Date(row.rts_ms).toISOString(),
    type: row.type === 'snapshot' ? 'snapshot' : 'update',
    data: row.data,
    checksum: row.checksum ?? undefined,
    group: row.group_step ?? undefined,
  };
}
