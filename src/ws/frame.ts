/**
 * @module ws/frame
 * A server-to-client WebSocket text frame built once (RFC 6455 section 5.2: FIN, opcode 1, no
 * mask), so that fanning a message out to N clients costs N socket writes of the same bytes and no
 * per-client framing or UTF-8 encoding.
 * @see https://www.rfc-editor.org/rfc/rfc6455#section-5.2
 */

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
