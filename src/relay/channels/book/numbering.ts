/**
 * @module relay/channels/book/numbering
 * A market's `book` streams as one numbered target: the whole book and every depth, each cut from
 * the target's full levels and updated with the wire package's apply.
 */
import {
  applyBookUpdate,
  type BookState,
  limitDepth,
} from '../../../../packages/protocol/src/protocol/book.ts';
import { type BookData, bookDepths } from '../../../../packages/protocol/src/protocol/messages.ts';
import type { TargetNumbering } from '../relay-definition.ts';
import { bookCodec } from './codec.ts';
import { diffBook } from './diff.ts';

export const bookNumbering: TargetNumbering<'book', BookState, BookData> = {
  ...bookCodec,
  diff: diffBook,
  channel: 'book',
  streams: [null, ...bookDepths].map((depth) => ({ field: depth === null ? 'full' : String(depth), depth })),
  project: (state, depth) => limitDepth(state, depth ?? null),
  apply: applyBookUpdate,
};
