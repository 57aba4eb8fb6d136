/**
 * @module history/postgres-rows
 * A recorded message as a row of the shared store's table (history/postgres-schema.ts) and back:
 * the envelope as columns, times as epoch milliseconds with the text as sent only where they do not
 * give it back, `data` as the JSON text sent. Rows go in as lines of COPY's text format (the
 * engine's bulk path: no statement to build, no array literals, a text field escaped only when it
 * holds a tab, a newline or a backslash) and come back as rows of a SELECT.
 */
import { type RecordedMessage, recordedDepth } from './store.ts';
import { storedTime } from './stored-time.ts';

/** The columns a read selects, numbers as float8 (exact: seq, times and checksums are integers below 2^53). */
export const COLUMNS =
  'channel, stream, market, depth, group_step, epoch, seq::float8 AS seq, ts_ms::float8 AS ts_ms, rts_ms::float8 AS rts_ms, ts_text, rts_text, type, data, checksum::float8 AS checksum';

/** A row of `history_messages` as read. */
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

/** The columns a write fills, in the order of {@link copyLine}'s fields. */
export const WRITTEN_COLUMNS =
  'channel, stream, market, depth, group_step, epoch, seq, ts_ms, rts_ms, ts_text, rts_text, type, data, checksum';

/** What COPY's text format takes for a NULL. */
const NULL = '\\N';
/** The characters COPY's text format reads as a field's or a row's end, or as an escape. */
const SPECIAL = /[\\\t\n\r]/;
const SPECIALS = /[\\\t\n\r]/g;
const ESCAPED: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A text field of COPY's text format: most texts (JSON as sent has no raw tab or newline) go as they are. */
function field(text: string): string {
  return SPECIAL.test(text) ? text.replace(SPECIALS, (special) => ESCAPED[special]!) : text;
}

function optional(text: string | undefined): string {
  return text === undefined ? NULL : field(text);
}

function integer(value: number | null | undefined): string {
  return value === null || value === undefined ? NULL : String(value);
}

/**
 * One message as a line of `COPY ... FROM STDIN` in text format, fields in the order of
 * {@link WRITTEN_COLUMNS}, and its `rts` in epoch milliseconds (which partition it goes into). A number that is
 * not an integer is refused by the engine, failing the write, as a bad value in an INSERT would.
 */
export function copyLine(record: RecordedMessage): { line: string; rtsMs: number } {
  const ts = storedTime(record.ts);
  const rts = storedTime(record.rts);
  const line = `${field(record.channel)}\t${field(record.stream)}\t${field(record.market)}\t${integer(record.depth)}\t${optional(record.group)}\t${field(record.epoch)}\t${record.seq}\t${ts.ms}\t${rts.ms}\t${optional(ts.text)}\t${optional(rts.text)}\t${field(record.type)}\t${field(record.data)}\t${integer(record.checksum)}\n`;
  return { line, rtsMs: rts.ms };
}

export function recordOf(row: Row): RecordedMessage {
  return {
    channel: row.channel,
    stream: row.stream,
    market: row.market,
    depth: recordedDepth(row.channel, row.depth),
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
