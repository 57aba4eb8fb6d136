/**
 * @module relay/streams/frame
 * Every message a stream sends about itself, as the wire has it (protocol.md "Server messages"):
 * its `snapshot` and `update`, `confirmed`, `status`, and the errors a subscription to it may get,
 * built from the stream's identity and position (so the stream, relay/streams/stream.ts, keeps its
 * sequence, state and subscribers; each message's fields are in the order the wire shows); and the
 * message prepared once for every subscriber: its JSON text and the complete server-to-client
 * WebSocket text frame around it (RFC 6455 section 5.2: FIN, opcode 1, no mask). The fan-out layer
 * owns the encoded payload (as Centrifuge's hub does), so fanning a message out to N clients costs
 * N socket writes of the same bytes and no per-client framing or UTF-8 encoding; src/ws/ and
 * src/sse/ only write these bytes.
 *
 * The other encodings of the same message are built lazily, once, the first time a subscriber
 * needs them: the SSE event body (docs/protocol.md "Server-Sent Events"), the permessage-deflate
 * frame (docs/protocol.md "Compression") and, for `snapshot` and `update`, the compact form with
 * and without deflate (docs/protocol.md "Compact encoding").
 * @see https://www.rfc-editor.org/rfc/rfc6455#section-5.2
 */
import { constants, deflateRawSync } from 'node:zlib';
import { onTheWire, streamIdNoun } from '../../../packages/protocol/src/protocol/channels.ts';
import { encodeCompactStreamMessage } from '../../../packages/protocol/src/protocol/compact.ts';
import type {
  BookDepth,
  Channel,
  ConfirmedMessage,
  ErrorMessage,
  ServerMessage,
  StatusMessage,
  StreamMessage,
  StreamState,
} from '../../../packages/protocol/src/protocol/messages.ts';

/**
 * The stream a message is about; a book's depth is named in each of its messages. `depth` is
 * undefined exactly on a channel without depths (null: a book's full depth), as a stream reads it
 * from its channel's definition once, when it is made, so no message asks the channel again.
 */
export interface MessageSubject {
  readonly channel: Channel;
  readonly market: string;
  readonly depth: BookDepth | undefined;
  readonly group?: string | undefined;
}

/** Where a `snapshot` or `update` sits in its stream, and the times of the state it carries. */
export interface MessagePosition {
  epoch: string;
  seq: number;
  ts: string;
  rts: string;
}

/**
 * A `snapshot` or `update` at `at`, `checksum` being that of the state after it; `prevSeq`: the
 * `seq` a conflated update applies to, when that is not the one before it (a paced group's).
 */
export function dataMessage(
  subject: MessageSubject,
  type: 'snapshot' | 'update',
  data: unknown,
  at: MessagePosition,
  checksum: number | undefined,
  prevSeq?: number,
): ServerMessage {
  // The cast is the one place where the generic state meets the wire types; the codecs
  // registered in relay/channels/codecs.ts pair each channel with its data shape.
  return {
    type,
    channel: subject.channel,
    market: subject.market,
    epoch: at.epoch,
    seq: at.seq,
    ...(prevSeq === undefined ? {} : { prev_seq: prevSeq }),
    ts: at.ts,
    rts: at.rts,
    ...depthOf(subject),
    ...groupOf(subject),
    data,
    ...(checksum === undefined ? {} : { checksum }),
  } as ServerMessage;
}

/** Upstream confirmed the state at `seq` of `epoch` when the relay received `confirmed`. */
export function confirmedMessage(
  subject: MessageSubject,
  epoch: string,
  seq: number,
  confirmed: string,
): ConfirmedMessage {
  return {
    type: 'confirmed',
    channel: subject.channel,
    market: subject.market,
    ...depthOf(subject),
    ...groupOf(subject),
    epoch,
    seq,
    confirmed,
  };
}

export function statusMessage(subject: MessageSubject, state: StreamState, reason?: string): StatusMessage {
  return {
    type: 'status',
    channel: subject.channel,
    market: subject.market,
    ...depthOf(subject),
    ...groupOf(subject),
    state,
    ...(reason === undefined ? {} : { reason }),
  };
}

/** A book's depth, named in each of its messages; nothing on a channel without depths. */
export function depthOf(subject: { readonly depth: BookDepth | undefined }): { depth?: BookDepth } {
  return subject.depth === undefined ? {} : { depth: subject.depth };
}

/** A grouped book's step, named in each of its messages beside its depth. */
export function groupOf(subject: { readonly group?: string | undefined }): { group?: string } {
  return subject.group === undefined ? {} : { group: subject.group };
}

/** A subscription that never got its first state could not be served at all. */
export function upstreamUnavailableError(subject: MessageSubject, reason: string | undefined): ErrorMessage {
  return {
    type: 'error',
    code: 'upstream_unavailable',
    message: `upstream is unavailable${reason === undefined ? '' : `: ${reason}`}`,
    channel: subject.channel,
    market: subject.market,
  };
}

/**
 * What a subscriber to a stream id upstream does not have (a market, a feed, a path) is told
 * (protocol.md "Error codes").
 */
export function unknownMarketError(channel: Channel, market: string): ErrorMessage {
  return {
    type: 'error',
    code: 'unknown_market',
    message: `${streamIdNoun(channel)} ${market} does not exist upstream`,
    channel,
    market,
  };
}

/** Where a stream message stands in its stream: what a client resumes from. */
export interface StreamPosition {
  readonly epoch: string;
  readonly seq: number;
}

/** What a WebSocket connection negotiated for stream messages: the encoding, and compression. */
export interface WireForm {
  readonly encoding: 'json' | 'compact';
  readonly deflate: boolean;
}

/** A message serialised once, shared by every connection it goes to. */
export class Frame {
  /** The complete WebSocket frame, written as-is to every subscriber's socket. */
  readonly wire: Buffer;
  readonly #payloadOffset: number;
  /** `snapshot` and `update` only. */
  readonly position: StreamPosition | undefined;
  /**
   * A conflated `update` only (one with `prev_seq`): the position of the state it applies to, which
   * a subscriber must have been sent last.
   */
  readonly basis: StreamPosition | undefined;
  /**
   * The same message as one compressed frame, once made (`deflate`; the stream makes it before
   * handing the frame to a subscriber that compresses): read as a field on the fan-out's path.
   */
  readonly deflated: Buffer | undefined = undefined;
  #sseData: Buffer | undefined;
  #compact: CompactWires | undefined;

  /** Use {@link toFrame} or {@link frameOfWire}. */
  constructor(
    wire: Buffer,
    payloadOffset: number,
    position: StreamPosition | undefined,
    basis?: StreamPosition,
  ) {
    this.wire = wire;
    this.#payloadOffset = payloadOffset;
    this.position = position;
    this.basis = basis;
  }

  /**
   * The same bytes as a frame that applies to `basis` (an ordinary update handed to a paced group,
   * whose members must have been sent the state before it: see relay/streams/subscribers.ts ConflatedFrames).
   */
  applyingTo(basis: StreamPosition): Frame {
    return new Frame(this.wire, this.#payloadOffset, this.position, basis);
  }

  /** The JSON payload's UTF-8 bytes: a view into `wire`, made when asked (one object less per frame). */
  get bytes(): Buffer {
    return this.wire.subarray(this.#payloadOffset);
  }

  /** The JSON text, decoded again from the bytes: for the few uses outside the fan-out. */
  get text(): string {
    return this.bytes.toString('utf8');
  }

  /**
   * The same message as one compressed WebSocket frame (RFC 7692), made once and kept as
   * `deflated`: valid for every connection that negotiated permessage-deflate with
   * `server_no_context_takeover` and a 15-bit window, because each message is compressed from an
   * empty dictionary.
   */
  deflate(): Buffer {
    const deflated = this.deflated ?? encodeDeflatedFrame(this.bytes);
    (this as { deflated: Buffer | undefined }).deflated = deflated;
    return deflated;
  }

  /** The frame for a connection of `form`; `stream` is the number compact frames carry. */
  wireFor(form: WireForm, stream: number): Buffer {
    if (form.encoding === 'compact')
      return form.deflate ? this.compactDeflatedWire(stream) : this.compactWire(stream);
    return form.deflate ? this.deflate() : this.wire;
  }

  /**
   * The compact frame of a `snapshot` or `update`, `stream` being its stream's number on this relay
   * (a frame is only ever served for one stream: a frame read from Redis in cluster mode is built
   * here for the local stream that serves it, so it takes that stream's number).
   */
  compactWire(stream: number): Buffer {
    return this.#compactWires(stream).plain;
  }

  /** The compact frame compressed, as {@link deflate} makes the JSON one. */
  compactDeflatedWire(stream: number): Buffer {
    const wires = this.#compactWires(stream);
    wires.deflated ??= encodeDeflatedFrame(wires.plain.subarray(wires.payloadOffset));
    return wires.deflated;
  }

  #compactWires(stream: number): CompactWires {
    if (this.#compact?.stream === stream) return this.#compact;
    if (this.position === undefined) throw new Error('only snapshot and update have a compact form');
    // Parsed back from the bytes rather than kept as an object: a ring of frames keeps bytes only.
    const message = JSON.parse(this.text) as StreamMessage;
    const { wire, payloadOffset } = encodeTextFrame(
      JSON.stringify(encodeCompactStreamMessage(message, stream)),
    );
    this.#compact = { stream, plain: wire, payloadOffset, deflated: undefined };
    return this.#compact;
  }

  /** `data: <json>` and the blank line that ends an SSE event; the `id:` line is per reader. */
  get sseData(): Buffer {
    // JSON.stringify never emits a raw line break, so the text is exactly one `data:` line.
    this.#sseData ??= Buffer.concat([SSE_DATA, this.bytes, SSE_END]);
    return this.#sseData;
  }
}

/** A frame's compact forms, for the stream number they were built with. */
interface CompactWires {
  stream: number;
  plain: Buffer;
  payloadOffset: number;
  deflated: Buffer | undefined;
}

/**
 * `message` serialised once. `idsArePaths`: whether the wire names its stream id `path`, when the
 * caller read it from the channel's definition already (a stream, when it was made); undefined:
 * the definition is asked, unless the message names no channel (a heartbeat, a `pong`).
 */
export function toFrame(message: ServerMessage, idsArePaths?: boolean): Frame {
  const named = idsArePaths === false || !('channel' in message) ? message : onTheWire(message);
  // The text itself is not kept: the bytes say the same in less than half the memory.
  const { wire, payloadOffset } = encodeTextFrame(JSON.stringify(named));
  if (message.type !== 'snapshot' && message.type !== 'update')
    return new Frame(wire, payloadOffset, undefined);
  const position = { epoch: message.epoch, seq: message.seq };
  const basis = message.prev_seq === undefined ? undefined : { epoch: message.epoch, seq: message.prev_seq };
  return new Frame(wire, payloadOffset, position, basis);
}

/** The frame of a `snapshot` or `update` whose unmasked text frame `wire` is (a resume ring's bytes). */
export function frameOfWire(wire: Buffer, position: StreamPosition): Frame {
  const lengthCode = (wire[1] ?? 0) & 0x7f;
  return new Frame(wire, lengthCode < 126 ? 2 : lengthCode === 126 ? 4 : 10, position);
}

const SSE_DATA = Buffer.from('data: ');
const SSE_END = Buffer.from('\n\n');

const FIN_TEXT = 0x81;
/** FIN, RSV1 (the "per-message compressed" bit of RFC 7692 section 6), opcode 1. */
const FIN_RSV1_TEXT = 0xc1;

/** The complete frame for `text`, and where its payload starts in it. */
export function encodeTextFrame(text: string): { wire: Buffer; payloadOffset: number } {
  const length = Buffer.byteLength(text, 'utf8');
  const { wire, payloadOffset } = allocateFrame(FIN_TEXT, length);
  wire.write(text, payloadOffset, 'utf8');
  return { wire, payloadOffset };
}

/**
 * RFC 7692 section 7.2.1: compress with DEFLATE, end with an empty stored block (a sync flush),
 * and drop its final 4 octets 00 00 ff ff; the receiver appends them back before inflating.
 */
export function encodeDeflatedFrame(payload: Buffer): Buffer {
  const compressed = deflateRawSync(payload, {
    finishFlush: constants.Z_SYNC_FLUSH,
    windowBits: windowBitsFor(payload.length),
  });
  const body = compressed.subarray(0, compressed.length - 4);
  const { wire, payloadOffset } = allocateFrame(FIN_RSV1_TEXT, body.length);
  body.copy(wire, payloadOffset);
  return wire;
}

/** zlib keeps this much lookahead: a window reaches back its size less this (deflate.h MIN_LOOKAHEAD). */
const MIN_LOOKAHEAD = 262;

/**
 * The smallest window (9..15 bits; raw deflate takes no less than 9) that still reaches back over
 * the whole payload, so the output is the same as with 15 bits. A fresh zlib context is set up for
 * every message, and a small window is less to allocate and clear, which is much of the cost of
 * compressing the few hundred bytes of a typical update. Any client inflates it: a window smaller than the one
 * negotiated is always allowed (RFC 7692 section 7.1.2.1).
 */
export function windowBitsFor(length: number): number {
  let bits = 9;
  while (bits < 15 && 2 ** bits - MIN_LOOKAHEAD < length) bits++;
  return bits;
}

function allocateFrame(firstByte: number, length: number): { wire: Buffer; payloadOffset: number } {
  const payloadOffset = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const wire = Buffer.allocUnsafe(payloadOffset + length);
  wire[0] = firstByte;
  if (length < 126) {
    wire[1] = length;
  } else if (length < 65_536) {
    wire[1] = 126;
    wire.writeUInt16BE(length, 2);
  } else {
    wire[1] = 127;
    wire.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
    wire.writeUInt32BE(length >>> 0, 6);
  }
  return { wire, payloadOffset };
}
