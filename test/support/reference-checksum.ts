/**
 * @module test/support/reference-checksum
 * The book checksum of docs/protocol.md "`book` data", written again from the document and
 * independently of protocol/book.ts (node:zlib's CRC-32, not crc-32), so that tests of the docs
 * and of the relay check the relay's checksum against the specification rather than against itself.
 */
import { crc32 } from 'node:zlib';

export type ReferenceLevel = readonly [price: string, size: string];

/** CRC-32 of the top 25 levels per side, interleaved bid, ask, as `price:size` joined by ':'. */
export function referenceBookChecksum(
  bids: readonly ReferenceLevel[],
  asks: readonly ReferenceLevel[],
): number {
  const parts: string[] = [];
  for (let i = 0; i < 25; i++) {
    const bid = bids[i];
    if (bid) parts.push(`${bid[0]}:${bid[1]}`);
    const ask = asks[i];
    if (ask) parts.push(`${ask[0]}:${ask[1]}`);
  }
  return crc32(parts.join(':'));
}
