/**
 * @module client/connection/frames
 * Reads relay frames defensively: a frame that is not JSON or has the wrong shape becomes a typed
 * decode failure (reported as an `error` event), never an exception inside the SDK. Checks only what
 * the SDK relies on; unknown message types and extra fields pass (protocol.md: fields may be added).
 * A JSON array is a compact `snapshot`/`update` (protocol.md "Compact encoding"): it is turned back
 * into the JSON-mode message with the connection's stream numbers, then checked like one. Every
 * other message is a JSON object on either encoding, so frames are read by their shape, whatever
 * was negotiated.
 */

import { depthOf } from '../../../protocol/src/channels/book/wire.ts';
import { channelWires, hasDepths } from '../../../protocol/src/channels/registry.ts';
import { isChannel as isChannelName, offTheWire } from '../../../protocol/src/protocol/channels.ts';
import {
  type CompactStreamLookup,
  decodeCompactStreamMessage,
} from '../../../protocol/src/protocol/compact.ts';
import type {
  BookDepth,
  Channel,
  ServerMessage,
  StreamState,
} from '../../../protocol/src/protocol/messages.ts';
import { type Fields, isObject, isStringArray } from '../../../protocol/src/util/field-checks.ts';

export type Decoded =
  | { ok: true; message: ServerMessage }
  | { ok: true; message: undefined }
  | { ok: false; reason: string; stream?: StreamRef; unknownStream?: true };

/** Which stream a malformed stream message claimed to belong to, so that stream can be resynced. */
export interface StreamRef {
  channel: Channel;
  market: string;
  depth: BookDepth | undefined;
  /** A grouped book's step (docs/protocol.md "Grouped books"). */
  group?: string | undefined;
}

/** A JSON connection's stream numbers: none. */
const noStreamNumbers: CompactStreamLookup = { get: () => undefined };

/** `numbers`: the connection's stream numbers, for compact data messages. */
export function decodeFrame(data: unknown, numbers: CompactStreamLookup = noStreamNumbers): Decoded {
  if (typeof data !== 'string')
    return { ok: false, reason: 'binary frame (the relay sends text frames only)' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return { ok: false, reason: 'frame is not JSON' };
  }
  if (Array.isArray(parsed)) return decodeCompactFrame(parsed, numbers);
  if (!isObject(parsed) || typeof parsed.type !== 'string')
    return { ok: false, reason: 'frame has no `type`' };
  // A `rest` message names its stream `path`: the SDK reads it as `market` too, as on every channel.
  const value = offTheWire(parsed);
  switch (value.type) {
    case 'snapshot':
    case 'update':
      return decodeStreamMessage(value);
    case 'status':
      return isStreamAddress(value) && isStreamState(value.state)
        ? accept(value)
        : { ok: false, reason: 'malformed status message' };
    case 'confirmed':
      return isStreamAddress(value) &&
        typeof value.epoch === 'string' &&
        Number.isSafeInteger(value.seq) &&
        typeof value.confirmed === 'string'
        ? accept(value)
        : { ok: false, reason: 'malformed confirmed message' };
    case 'subscribed':
    case 'unsubscribed':
      return isChannel(value.channel) && isStringArray(value.markets) && isStreamNumbers(value.streams)
        ? accept(value)
        : { ok: false, reason: `malformed ${value.type} message` };
    case 'error':
      return typeof value.code === 'string' && typeof value.message === 'string'
        ? accept(value)
        : { ok: false, reason: 'malformed error message' };
    case 'subscriptions':
      return Array.isArray(value.subscriptions) && typeof value.limits === 'object' && value.limits !== null
        ? accept(value)
        : { ok: false, reason: 'malformed subscriptions message' };
    case 'pong':
    case 'heartbeat':
      return accept(value);
    case 'replay_gap':
      return isRequestId(value.id) &&
        typeof value.market === 'string' &&
        typeof value.from === 'string' &&
        typeof value.to === 'string'
        ? accept(value)
        : { ok: false, reason: 'malformed replay_gap message' };
    case 'replayed':
      return isRequestId(value.id) && Number.isSafeInteger(value.messages)
        ? accept(value)
        : { ok: false, reason: 'malformed replayed message' };
    case 'going_away':
      return Number.isSafeInteger(value.reconnect_in_ms) && (value.reconnect_in_ms as number) >= 0
        ? accept(value)
        : { ok: false, reason: 'malformed going_away message' };
    default:
      return { ok: true, message: undefined };
  }
}

/** A request's `id` as the relay echoes it (a replay's names the replay). */
function isRequestId(value: unknown): boolean {
  return typeof value === 'string' || Number.isSafeInteger(value);
}

function decodeCompactFrame(value: unknown[], numbers: CompactStreamLookup): Decoded {
  const decoded = decodeCompactStreamMessage(value, numbers);
  // The codec gives back the JSON-mode message: the same checks then hold for both encodings.
  if (decoded.ok) return decodeStreamMessage(decoded.message as unknown as Fields);
  if (decoded.reason === 'unknown_stream') return { ok: false, reason: decoded.message, unknownStream: true };
  const reason = `malformed compact message: ${decoded.message}`;
  const identity = typeof value[1] === 'number' ? numbers.get(value[1]) : undefined;
  if (identity === undefined) return { ok: false, reason };
  const { channel, market } = identity;
  return {
    ok: false,
    reason,
    stream: {
      channel,
      market,
      depth: hasDepths(channel) ? (identity.depth ?? null) : undefined,
      group: identity.group,
    },
  };
}

function decodeStreamMessage(value: Fields): Decoded {
  if (!isStreamAddress(value))
    return { ok: false, reason: `malformed ${String(value.type)}: no stream address` };
  const stream: StreamRef = {
    channel: value.channel,
    market: value.market,
    depth: hasDepths(value.channel) ? depthOf({ depth: value.depth }) : undefined,
    group: typeof value.group === 'string' ? value.group : undefined,
  };
  const fail = (what: string): Decoded => ({
    ok: false,
    reason: `malformed ${String(value.type)}: ${what}`,
    stream,
  });
  if (typeof value.epoch !== 'string') return fail('epoch');
  if (!Number.isSafeInteger(value.seq) || (value.seq as number) < 0) return fail('seq');
  if (
    value.prev_seq !== undefined &&
    (value.type !== 'update' ||
      !Number.isSafeInteger(value.prev_seq) ||
      (value.prev_seq as number) < 0 ||
      (value.prev_seq as number) >= (value.seq as number))
  )
    return fail('prev_seq');
  const wrong = channelWires[value.channel].dataProblem(
    { ...value, data: value.data },
    value.type === 'snapshot',
  );
  return wrong === undefined ? accept(value) : fail(wrong);
}

/**
 * The cast is the one place where a checked frame meets the wire types; the checks above cover
 * every field the SDK reads.
 */
function accept(value: Fields): Decoded {
  return { ok: true, message: value as unknown as ServerMessage };
}

function isStreamAddress(value: Fields): value is Fields & { channel: Channel; market: string } {
  return isChannel(value.channel) && typeof value.market === 'string';
}

function isChannel(value: unknown): value is Channel {
  return typeof value === 'string' && isChannelName(value);
}

function isStreamState(value: unknown): value is StreamState {
  return value === 'live' || value === 'stale' || value === 'closed';
}

/** `subscribed.streams` on a compact connection (market -> stream number); absent otherwise. */
function isStreamNumbers(value: unknown): boolean {
  return (
    value === undefined ||
    (isObject(value) && Object.values(value).every((n) => Number.isSafeInteger(n) && (n as number) > 0))
  );
}
