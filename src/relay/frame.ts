/**
 * @module relay/frame
 * A message prepared once for every subscriber: its JSON text and the complete server-to-client
 * WebSocket text frame around it (RFC 6455 section 5.2: FIN, opcode 1, no mask). The fan-out layer
 * owns the encoded payload (as Centrifuge's hub does), so fanning a message out to N clients costs
 * N socket writes of the same bytes and no per-client framing or UTF-8 encoding; src/ws/ only
 * writes these frames.
 * @see https://www.rfc-editor.org/rfc/rfc6455#section-5.2
 */
import type { ServerMessage } from '../protocol/messages.ts';

/** A message serialised once, shared by every connection it goes to. */
export interface Frame {
  readonly text: string;
  /** The JSON payload's UTF-8 bytes (a view into `wire`). */
  readonly bytes: Buffer;
  /** The complete WebSocket frame, written as-is to every subscriber's socket. */
  readonly wire: Buffer;
}

export function toFrame(message: ServerMessage): Frame {
  const text = JSON.stringify(message);
  const { wire, payloadOffset } = encodeTextFrame(text);
  return { text, bytes: wire.subarray(payloadOffset), wire };
}

const FIN_TEXT = 0x81;

/** The complete frame for `text`, and where its payload starts in it. */
export function encodeTextFrame(text: string): { wire: Buffer; payloadOffset: number } {
  const length = Buffer.byteLength(text, 'utf8');
  const payloadOffset = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const wire = Buffer.allocUnsafe(payloadOffset + length);
  wire[0] = FIN_TEXT;
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
  wire.write(text, payloadOffset, 'utf8');
  return { wire, payloadOffset };
}
