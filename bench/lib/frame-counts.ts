/**
 * @module bench/lib/frame-counts
 * What the load generator counts per frame, without parsing it: stream messages (snapshot/update)
 * against everything else, their bytes, and latency from `rts`. Frames come in two encodings: the
 * JSON object (`{"type":"update",...}`) and, on a `market-relay.compact.1` connection, the compact
 * array (`["u",stream,epoch,seq,ts,rts,...]`, docs/protocol.md "Compact encoding"); the first bytes
 * tell them apart.
 */
import type { LatencyRecorder } from './latency.ts';

export interface GroupCounts {
  clients: number;
  messages: number;
  /** Payload bytes of stream messages (snapshot and update). */
  bytes: number;
  /** Payload plus WebSocket frame header (server frames are unmasked). */
  wireBytes: number;
  snapshots: number;
  snapshotBytes: number;
  updates: number;
  updateBytes: number;
  updateWireBytes: number;
  other: number;
  /** Of `other`, `status` messages (a stream gone stale, or live again). */
  statuses: number;
  /** Bytes the clients' sockets read in the window (compressed where deflate was negotiated). */
  socketBytes: number;
  /** Clients whose relay selected the subprotocol they offered (compact groups only). */
  negotiated: number;
  /** Frames of the group's first client decoded in full and checked (see FrameSample). */
  sampled: number;
  /** Of those, stream messages that came as compact arrays. */
  sampledCompact: number;
  /** Of those, frames that did not decode, broke `seq` or failed the book checksum. */
  sampleFailures: number;
}

export function emptyCounts(clientCount: number): GroupCounts {
  return {
    clients: clientCount,
    messages: 0,
    bytes: 0,
    wireBytes: 0,
    snapshots: 0,
    snapshotBytes: 0,
    updates: 0,
    updateBytes: 0,
    updateWireBytes: 0,
    other: 0,
    statuses: 0,
    socketBytes: 0,
    negotiated: 0,
    sampled: 0,
    sampledCompact: 0,
    sampleFailures: 0,
  };
}

const RTS = Buffer.from('"rts":"');
const ISO_LENGTH = 24;
/**
 * `{"type":"` is 9 bytes: the next two bytes tell `snapshot` and `update` from every other type
 * (`subscribed`, `status`, `unsubscribed`, ...) without parsing.
 */
const TYPE_AT = 9;
const SNAPSHOT = 'sn';
const UPDATE = 'up';
/** No other type starts `st`; a compact connection sends `status` as JSON too. */
const STATUS = 'st';
/** A compact stream message starts `["s",` or `["u",`; every other message is still a JSON object. */
const OPEN_BRACKET = 0x5b;
const COMPACT_KIND_AT = 2;
const COMMA = 0x2c;
/** `kind, stream, epoch, seq, ts, rts`: the commas before `data`. */
const ENVELOPE_COMMAS = 6;

function wsHeaderBytes(length: number): number {
  return length < 126 ? 2 : length < 65_536 ? 4 : 10;
}

/** `snapshot`, `update` or neither, from the first bytes of either encoding. */
function kindOf(data: Buffer): 'snapshot' | 'update' | undefined {
  if (data[0] === OPEN_BRACKET) {
    const kind = String.fromCharCode(data[COMPACT_KIND_AT] ?? 0);
    return kind === 's' ? 'snapshot' : kind === 'u' ? 'update' : undefined;
  }
  const kind = data.toString('latin1', TYPE_AT, TYPE_AT + 2);
  return kind === SNAPSHOT ? 'snapshot' : kind === UPDATE ? 'update' : undefined;
}

/** The `rts` of an update as epoch ms: found by search in JSON, from the envelope in a compact array. */
function rtsOf(data: Buffer): number | undefined {
  if (data[0] !== OPEN_BRACKET) {
    const at = data.indexOf(RTS);
    if (at < 0) return undefined;
    const start = at + RTS.length;
    return Date.parse(data.toString('latin1', start, start + ISO_LENGTH));
  }
  // The envelope holds no comma inside a value (numbers, an epoch id, ISO times), so the sixth
  // comma ends it; only those few bytes are parsed.
  let end = 0;
  for (let commas = 0; commas < ENVELOPE_COMMAS; end++) {
    if (end >= data.length) return undefined;
    if (data[end] === COMMA) commas += 1;
  }
  const envelope: unknown = JSON.parse(`${data.toString('latin1', 0, end - 1)}]`);
  if (!Array.isArray(envelope)) return undefined;
  const [, , , , ts, rts] = envelope as unknown[];
  if (typeof rts === 'string') return Date.parse(rts);
  return typeof ts === 'number' && typeof rts === 'number' ? ts + rts : undefined;
}

/** Counts one frame into its group; returns whether it was a stream message. */
export function countFrame(counts: GroupCounts, data: Buffer, latency: LatencyRecorder): boolean {
  const kind = kindOf(data);
  if (kind === undefined) {
    counts.other += 1;
    if (data.toString('latin1', TYPE_AT, TYPE_AT + 2) === STATUS) counts.statuses += 1;
    return false;
  }
  const wire = data.length + wsHeaderBytes(data.length);
  counts.messages += 1;
  counts.bytes += data.length;
  counts.wireBytes += wire;
  if (kind === 'snapshot') {
    counts.snapshots += 1;
    counts.snapshotBytes += data.length;
    return true;
  }
  counts.updates += 1;
  counts.updateBytes += data.length;
  counts.updateWireBytes += wire;
  const rts = rtsOf(data);
  if (rts !== undefined && Number.isFinite(rts)) latency.record(rts);
  return true;
}
