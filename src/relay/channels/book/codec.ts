/**
 * @module relay/channels/book/codec
 * The `book` channel's codec (protocol.md "`book` data"): its state is the sorted, aggregated
 * levels (./levels.ts), diffed level by level (./diff.ts), and each message carries the checksum
 * of the levels after it.
 */
import { crc32 } from 'node:zlib';
import { type BookState, bookChecksum } from '../../../../packages/protocol/src/protocol/book.ts';
import type { BookData } from '../../../../packages/protocol/src/protocol/messages.ts';
import type { StreamCodec } from '../relay-definition.ts';
import { diffBook } from './diff.ts';

export const bookCodec: StreamCodec<BookState, BookData> = {
  diff: diffBook,
  // Node's native CRC-32: about a third of the portable one's time, on every book message.
  checksum: (state) => bookChecksum(state, crc32),
};
