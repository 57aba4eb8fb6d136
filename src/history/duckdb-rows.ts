/**
 * @module history/duckdb-rows
 * A recorded message as a row of the embedded store's `messages` table (history/duckdb-store.ts)
 * and back, exactly: the envelope's fields as columns, times as epoch milliseconds with the text as
 * sent kept only where those do not give it back, `data` as text (or, in a store made before its
 * column was zstd-compressed, deflated when large).
 */
import { inflateRawSync } from 'node:zlib';
import type { DuckDBAppender } from '@duckdb/node-api';
import { type RecordedMessage, recordedDepth } from './store.ts';
import { storedTime } from './stored-time.ts';

/** Appends `row`; returns its `rts` in epoch milliseconds. */
export function appendRow(
  appender: DuckDBAppender,
  row: RecordedMessage,
  deflated: Buffer | undefined,
): number {
  appender.appendVarchar(row.channel);
  appender.appendVarchar(row.stream);
  appender.appendVarchar(row.market);
  if (row.depth === null || row.depth === undefined) appender.appendNull();
  else appender.appendInteger(row.depth);
  appender.appendVarchar(row.epoch);
  appender.appendBigInt(BigInt(row.seq));
  const ts = storedTime(row.ts);
  const rts = storedTime(row.rts);
  appender.appendBigInt(BigInt(ts.ms));
  appender.appendBigInt(BigInt(rts.ms));
  if (ts.text === undefined) appender.appendNull();
  else appender.appendVarchar(ts.text);
  if (rts.text === undefined) appender.appendNull();
  else appender.appendVarchar(rts.text);
  appender.appendVarchar(row.type);
  if (deflated === undefined) {
    appender.appendVarchar(row.data);
    appender.appendNull();
  } else {
    appender.appendNull();
    appender.appendBlob(deflated);
  }
  if (row.checksum === undefined) appender.appendNull();
  else appender.appendUInteger(row.checksum);
  if (row.group === undefined) appender.appendNull();
  else appender.appendVarchar(row.group);
  appender.endRow();
  return rts.ms;
}

export function recordOf(row: readonly unknown[]): RecordedMessage {
  const [
    channel,
    stream,
    market,
    depth,
    epoch,
    seq,
    tsMs,
    rtsMs,
    tsText,
    rtsText,
    type,
    data,
    deflated,
    checksum,
    group,
  ] = row;
  return {
    channel: String(channel),
    stream: String(stream),
    market: String(market),
    depth: recordedDepth(String(channel), depth === null ? null : Number(depth)),
    epoch: String(epoch),
    seq: Number(seq),
    ts: typeof tsText === 'string' ? tsText : new Date(Number(tsMs)).toISOString(),
    rts: typeof rtsText === 'string' ? rtsText : new Date(Number(rtsMs)).toISOString(),
    type: type === 'snapshot' ? 'snapshot' : 'update',
    data: typeof data === 'string' ? data : inflateRawSync(deflated as Uint8Array).toString('utf8'),
    checksum: checksum === null ? undefined : Number(checksum),
    group: typeof group === 'string' ? group : undefined,
  };
}

const SIZE_UNITS: Readonly<Record<string, number>> = {
  bytes: 1,
  KiB: 1024,
  MiB: 1024 ** 2,
  GiB: 1024 ** 3,
  TiB: 1024 ** 4,
  KB: 1000,
  MB: 1000 ** 2,
  GB: 1000 ** 3,
};

/** DuckDB's human size (`1.2 MiB`, `0 bytes`) in bytes. */
export function parseSize(text: string): number {
  const match = /^([\d.]+)\s*([A-Za-z]+)$/.exec(text.trim());
  if (match === null) return 0;
  return Number(match[1]) * (SIZE_UNITS[match[2] ?? ''] ?? 1);
}
