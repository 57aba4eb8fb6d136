/**
 * @module sim/comments
 * Market comments with one level of replies (docs/upstream.md, "Comment"), drawn on demand
 * from the seed and the market, so they cost no memory and never change. The first market always
 * has more top-level comments than the page cap of 50, so the cap can be seen.
 */
import type { Comment, CommentReply } from '../upstream/schemas.ts';
import type { SimUser } from './catalog.ts';
import type { SimMarket } from './market.ts';
import { createPrng, deriveSeed, type Prng } from './prng.ts';

const TOP_LEVEL_TEMPLATES = [
  '{symbol} looks strong into expiry, holding YES.',
  'No way {symbol} clears that strike in time.',
  'Spread is tight today, good liquidity on this one.',
  'Oracle feed for {symbol} has been very stable.',
  'Bought the dip at {price}.',
  'Who else is market making here?',
];
const REPLY_TEMPLATES = [
  'Agreed.',
  'Not so sure about that.',
  'Same here.',
  'Source?',
  'We will see at expiry.',
];

function authorOf(user: SimUser): Comment['author'] {
  return { user_id: user.userId, username: user.username, wallet_address: user.walletAddress };
}

function fill(template: string, market: SimMarket, rng: Prng): string {
  return template.replace('{symbol}', market.token.symbol).replace('{price}', `0.${rng.int(10, 90)}`);
}

/** Newest first. */
export function commentsOf(seed: number, market: SimMarket, users: readonly SimUser[]): Comment[] {
  if (users.length === 0) return [];
  const rng = createPrng(deriveSeed(seed, 'comments', market.id));
  const count = market.index === 0 ? 57 : rng.int(0, 30);
  const prefix = market.id.slice(0, 8);
  const comments: Comment[] = [];
  for (let n = count; n >= 1; n--) {
    const replies: CommentReply[] = [];
    const replyCount = rng.int(0, 3);
    for (let r = 1; r <= replyCount; r++) {
      replies.push({
        comment_id: `${prefix}-c${n}-r${r}`,
        depth: 1,
        content: rng.pick(REPLY_TEMPLATES),
        like_count: rng.int(0, 12),
        liked_by_me: false,
        author: authorOf(rng.pick(users)),
      });
    }
    comments.push({
      comment_id: `${prefix}-c${n}`,
      depth: 0,
      content: fill(rng.pick(TOP_LEVEL_TEMPLATES), market, rng),
      like_count: rng.int(0, 40),
      liked_by_me: false,
      author: authorOf(rng.pick(users)),
      replies,
    });
  }
  return comments;
}
