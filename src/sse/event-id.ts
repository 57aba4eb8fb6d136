/**
 * @module sse/event-id
 * The `id:` of an SSE event carries the position of every stream of the response, so that the
 * `Last-Event-ID` a browser sends when it reconnects on its own says exactly where each stream
 * stands (docs/protocol.md "Server-Sent Events"). Compact: positions are listed in the order of the
 * request's `markets` (which the reconnect repeats), so no market id is spelt out; each is
 * `<epoch>.<seq in base 36>`, or empty for a stream that has sent nothing yet, joined by `,`.
 */
import type { StreamPosition } from '../relay/streams/frame.ts';

const EPOCH = /^[A-Za-z0-9_-]{1,64}$/;
const SEQ = /^[0-9a-z]{1,11}$/;

export function positionToken(position: StreamPosition): string {
  return `${position.epoch}.${position.seq.toString(36)}`;
}

export function encodeEventId(tokens: readonly string[]): string {
  return tokens.join(',');
}

/**
 * The positions in an event id written for `count` streams, undefined where a stream had none;
 * undefined altogether when the id is not one this relay wrote for that many streams.
 */
export function decodeEventId(id: string, count: number): (StreamPosition | undefined)[] | undefined {
  const tokens = id.split(',');
  if (tokens.length !== count) return undefined;
  const positions: (StreamPosition | undefined)[] = [];
  for (const token of tokens) {
    if (token === '') {
      positions.push(undefined);
      continue;
    }
    const dot = token.lastIndexOf('.');
    const epoch = token.slice(0, dot);
    const seqText = token.slice(dot + 1);
    if (dot < 0 || !EPOCH.test(epoch) || !SEQ.test(seqText)) return undefined;
    const seq = Number.parseInt(seqText, 36);
    if (!Number.isSafeInteger(seq)) return undefined;
    positions.push({ epoch, seq });
  }
  return positions;
}
