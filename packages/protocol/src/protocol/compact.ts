/**
 * @module protocol/compact
 * The compact encoding of `snapshot` and `update` (docs/protocol.md "Compact encoding"), negotiated
 * as the WebSocket subprotocol {@link COMPACT_SUBPROTOCOL}: a JSON array
 * `[kind, stream, epoch, seq, ts, rts, data]` (plus `checksum` on the channels whose messages carry
 * one, then `prev_seq` on a paced subscription's conflated update) whose stream number stands for
 * (channel, market, depth, group), whose times are epoch milliseconds when that is exact and whose
 * `data` takes its channel's compact form where it has one (a book's prices drop upstream's
 * trailing zeros: channels/book/compact.ts). Every step is exactly reversible, so decoding gives
 * back the JSON-mode message. Pure and shared by the relay and the browser SDK; what it asks of a
 * channel, it asks of the registry (channels/registry.ts `channelWires`).
 */
import type { CompactBookData } from '../channels/book/wire.ts';
import { PATH_FIELD } from '../channels/definition.ts';
import { channelWires } from '../channels/registry.ts';
import type { Channel } from './channels.ts';
import type { BookDepth, PlainChannel, StreamMessage } from './messages.ts';

export type { CompactBookData } from '../channels/book/wire.ts';

/** The `Sec-WebSocket-Protocol` value that selects this encoding. */
export const COMPACT_SUBPROTOCOL = 'market-relay.compact.1';

/** Epoch milliseconds when that spells the time exactly, otherwise the original string. */
export type CompactTime = number | string;
export type CompactKind = 's' | 'u';

type Envelope = [
  kind: CompactKind,
  stream: number,
  epoch: string,
  seq: number,
  ts: CompactTime,
  rts: CompactTime,
];
export type CompactBookMessage = [...Envelope, data: CompactBookData, checksum: number];
/** The messages of channels without depths that carry a checksum: `rest`'s and a channel's that declares one. */
type CheckedMessage = Extract<StreamMessage, { channel: PlainChannel; checksum: number }>;
/** `data` exactly as in JSON mode (`rest`: a body or a JSON Patch), then the checksum. */
export type CompactCheckedMessage = [...Envelope, data: CheckedMessage['data'], checksum: number];
/** Every other channel: `data` exactly as in JSON mode. */
export type CompactPlainMessage = [...Envelope, data: Exclude<StreamMessage, { checksum: number }>['data']];
export type CompactStreamMessage = CompactBookMessage | CompactCheckedMessage | CompactPlainMessage;

/** What a stream number stands for, as the client learnt it from `subscribed.streams`. */
export interface CompactStreamIdentity {
  channel: Channel;
  market: string;
  /** `book` only: 1, 5, 10, 25, 50 or null for the full book. */
  depth?: BookDepth;
  /** A grouped `book` only: its group step. */
  group?: string;
}
/** The client's stream numbers: a `Map<number, CompactStreamIdentity>` will do. */
export interface CompactStreamLookup {
  get(stream: number): CompactStreamIdentity | undefined;
}

export type CompactDecodeResult =
  | { ok: true; message: StreamMessage }
  /** `unknown_stream`: well formed, but the stream number is not in the lookup (ignore it). */
  | { ok: false; reason: 'malformed' | 'unknown_stream'; message: string };

// ---------------------------------------------------------------------------------------------
// Times

/** `ts` as epoch milliseconds if they spell it exactly (`toISOString`), otherwise the string. */
export function compactTime(iso: string): CompactTime {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) && new Date(ms).toISOString() === iso ? ms : iso;
}

/** `rts` as milliseconds after `ts` when both are exact, otherwise the string. */
export function compactOffset(ts: CompactTime, rts: string): CompactTime {
  if (typeof ts !== 'number') return rts;
  const ms = compactTime(rts);
  // Times millennia apart can differ by more than a double holds exactly: keep the text then.
  return typeof ms === 'number' && Number.isSafeInteger(ms - ts) ? ms - ts : rts;
}

/** The ISO text of epoch milliseconds, or undefined when they are not a time `Date` can spell. */
function isoOf(ms: number): string | undefined {
  if (!Number.isInteger(ms)) return undefined;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

// ---------------------------------------------------------------------------------------------
// Encoding

/** The compact array of a `snapshot` or `update`, `stream` being its stream's relay-wide number. */
export function encodeCompactStreamMessage(message: StreamMessage, stream: number): CompactStreamMessage {
  const ts = compactTime(message.ts);
  const envelope: Envelope = [
    message.type === 'snapshot' ? 's' : 'u',
    stream,
    message.epoch,
    message.seq,
    ts,
    compactOffset(ts, message.rts),
  ];
  const { compact: form, checksummed } = channelWires[message.channel];
  const data = form === undefined ? message.data : form.encode(message.data);
  // The element types are the channel's: TypeScript cannot pair a channel's data with its form.
  const compact = (
    checksummed === true
      ? [...envelope, data, (message as { checksum: number }).checksum]
      : [...envelope, data]
  ) as CompactStreamMessage;
  // A conflated update's `prev_seq` goes after everything else: one more element, read back by its count.
  return message.prev_seq === undefined ? compact : ([...compact, message.prev_seq] as CompactStreamMessage);
}

// ---------------------------------------------------------------------------------------------
// Decoding: the input comes from the wire, so every element is checked and nothing throws.

class Malformed extends Error {}

/**
 * The JSON-mode message of a compact array (already `JSON.parse`d), its stream found in `lookup`;
 * an error result, never an exception, for anything else.
 */
export function decodeCompactStreamMessage(value: unknown, lookup: CompactStreamLookup): CompactDecodeResult {
  try {
    return decode(value, lookup);
  } catch (error) {
    if (error instanceof Malformed) return { ok: false, reason: 'malformed', message: error.message };
    throw error;
  }
}

function decode(value: unknown, lookup: CompactStreamLookup): CompactDecodeResult {
  if (!Array.isArray(value)) throw new Malformed('not an array');
  const identity = lookup.get(value[1] as number);
  // One element past the channel's ordinary length is a conflated update's `prev_seq`.
  const ordinary = identity === undefined ? value.length : ordinaryLength(identity.channel);
  if (value.length !== ordinary + 1) return decodeArray(value, value.length, identity);
  const result = decodeArray(value, ordinary, identity);
  return result.ok ? { ok: true, message: withPrevSeq(result.message, value[ordinary]) } : result;
}

/** Elements of a channel's ordinary message: the envelope, `data`, and a checksum where it has one. */
function ordinaryLength(channel: Channel): number {
  return channelWires[channel].checksummed === true ? 8 : 7;
}

function withPrevSeq(message: StreamMessage, prevSeq: unknown): StreamMessage {
  if (message.type !== 'update') throw new Malformed('only an update carries prev_seq');
  if (!Number.isSafeInteger(prevSeq) || (prevSeq as number) < 0 || (prevSeq as number) >= message.seq)
    throw new Malformed('prev_seq is not a whole number below seq');
  // In JSON mode's place, right after `seq`, so the message serialises to the same text.
  const fields = Object.entries(message);
  fields.splice(fields.findIndex(([name]) => name === 'seq') + 1, 0, ['prev_seq', prevSeq]);
  return Object.fromEntries(fields) as StreamMessage;
}

/** The message of `value`'s first `length` elements; `identity`: its stream as looked up. */
function decodeArray(
  value: unknown[],
  length: number,
  identity: CompactStreamIdentity | undefined,
): CompactDecodeResult {
  const [kind, stream, epoch, seq, ts, rts, data] = value;
  if (kind !== 's' && kind !== 'u') throw new Malformed('kind is not "s" or "u"');
  if (!Number.isSafeInteger(stream) || (stream as number) < 1)
    throw new Malformed('stream is not a positive integer');
  if (identity === undefined)
    return { ok: false, reason: 'unknown_stream', message: `unknown stream number ${stream}` };
  if (typeof epoch !== 'string') throw new Malformed('epoch is not a string');
  if (!Number.isSafeInteger(seq) || (seq as number) < 0) throw new Malformed('seq is not a whole number');
  const isoTs = decodeTime(ts, 'ts');
  const isoRts = decodeRts(rts, ts);
  const head = {
    type: kind === 's' ? 'snapshot' : 'update',
    channel: identity.channel,
    market: identity.market,
    epoch,
    seq: seq as number,
    ts: isoTs,
    rts: isoRts,
  };
  const wire = channelWires[identity.channel];
  const checksum = wire.checksummed === true ? { checksum: checked(value[7], length, identity.channel) } : {};
  if (wire.checksummed !== true && length !== 7)
    throw new Malformed(`a ${identity.channel} message has 7 elements`);
  const shape =
    wire.depths === true
      ? { depth: identity.depth ?? null, ...(identity.group === undefined ? {} : { group: identity.group }) }
      : {};
  const named = wire.streamIds.kind === 'path' ? { [PATH_FIELD]: identity.market } : {};
  // The cast is where the wire meets the types: like JSON mode, a channel's data is taken as sent.
  const message = { ...head, ...named, ...shape, data: dataOf(data, kind, identity.channel), ...checksum };
  return { ok: true, message: message as StreamMessage };
}

/** A message's checksum element, of a channel whose messages have 8 elements. */
function checked(value: unknown, length: number, channel: Channel): number {
  if (length !== 8) throw new Malformed(`a ${channel} message has 8 elements`);
  return checksumOf(value);
}

/** `data` as JSON mode has it: through the channel's compact form if it has one, otherwise as sent. */
function dataOf(data: unknown, kind: CompactKind, channel: Channel): unknown {
  const { compact: form, streamIds } = channelWires[channel];
  if (form !== undefined) {
    const decoded = form.decode(data);
    if (!decoded.ok) throw new Malformed(decoded.problem);
    return decoded.data;
  }
  // A channel of paths carries any body in a snapshot, a JSON Patch in an update.
  if (streamIds.kind === 'path') {
    if (kind === 'u' && !Array.isArray(data)) throw new Malformed(`a ${channel} update is not a JSON Patch`);
    return data;
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new Malformed('data is not an object');
  return data;
}
function checksumOf(value: unknown): number {
  if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > 0xffffffff)
    throw new Malformed('checksum is not an unsigned 32-bit integer');
  return value as number;
}

function decodeTime(value: unknown, name: string): string {
  if (typeof value === 'string') return value;
  const iso = typeof value === 'number' ? isoOf(value) : undefined;
  if (iso === undefined) throw new Malformed(`${name} is neither a time string nor epoch milliseconds`);
  return iso;
}

function decodeRts(value: unknown, ts: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value !== 'number' || typeof ts !== 'number')
    throw new Malformed('rts is neither a time string nor milliseconds after a numeric ts');
  const iso = Number.isSafeInteger(value) ? isoOf(ts + value) : undefined;
  if (iso === undefined) throw new Malformed('rts is not a whole number of milliseconds after ts');
  return iso;
}
