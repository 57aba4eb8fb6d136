/**
 * @module upstream/schemas
 * One zod schema per resource and response envelope of the upstream's public interface
 * (docs/upstream.md): the scalars, the CLOB, markets, search and tokens, health. A user's and the
 * rewards program's resources are upstream/account-schemas.ts. Every type the project uses for
 * upstream data is derived from these two; the client validates with them and the simulator is
 * typed by them, so the two cannot drift apart.
 *
 * Field types are kept exactly as upstream gives them: decimal strings stay strings (never a JS
 * number, so no binary rounding), numbers stay numbers.
 */
import { z } from 'zod';
import { MARKET_ID_PATTERN } from '../../packages/protocol/src/protocol/limits.ts';
import { anyJson } from './compiled-check.ts';

// ---------------------------------------------------------------------------------------------
// Scalars

/** Market IDs are UUIDs (any version: upstream only promises "UUID string"). */
export const uuid = z.string().regex(MARKET_ID_PATTERN, 'not a UUID');

/** A decimal string of any precision ("12", "0.5", "-3.25"). */
export const decimalString = z.string().regex(/^-?\d+(\.\d+)?$/, 'not a decimal string');

/** A price: decimal string with exactly 8 decimal places (docs/upstream.md). */
export const price8 = z.string().regex(/^-?\d+\.\d{8}$/, 'not a decimal string with 8 decimal places');

/** A decimal string with 2 decimal places (win_rate). */
export const decimal2 = z.string().regex(/^-?\d+\.\d{2}$/, 'not a decimal string with 2 decimal places');

/** A non-negative size: decimal string. */
export const sizeString = z.string().regex(/^\d+(\.\d+)?$/, 'not a non-negative decimal string');

/**
 * ISO 8601 with `Z` or a UTC offset (`+00:00`, `+02:00`), fractions of a second optional (the batch
 * price response may omit them). Kept as upstream wrote it; wherever the relay compares or orders
 * times it compares the instants (`Date.parse`), and `ts` is the instant in `Z` form.
 */
export const isoTimestamp = z.iso.datetime({ offset: true });

export const hexString = z.string().regex(/^0x[0-9a-fA-F]+$/, 'not a hex string');

/** An integer carried as a string (token price `raw_price`). */
export const integerString = z.string().regex(/^-?\d+$/, 'not an integer string');

export const pagination = z.object({
  total: z.number().int().nonnegative(),
  limit: z.number().int().nonnegative(),
  offset: z.number().int().nonnegative(),
  hasMore: z.boolean(),
});
export const paginationWithoutTotal = pagination.omit({ total: true });

/** What every envelope carries beside its data. */
export const ok = { success: z.literal(true) };

// ---------------------------------------------------------------------------------------------
// CLOB

export const orderEntry = z.object({
  id: z.string(),
  price: price8,
  size: sizeString,
  token_id: z.number().int(),
});

export const orderBook = z.object({
  market_id: uuid,
  bids: z.array(orderEntry),
  asks: z.array(orderEntry),
  last_price: price8,
  timestamp: isoTimestamp,
});

/** Batch price snapshot. A market without price data has only `market_id` and `timestamp`. */
export const clobPriceSnapshot = z.object({
  market_id: uuid,
  best_bid: price8.optional(),
  best_ask: price8.optional(),
  midpoint_price: price8.optional(),
  last_price: price8.optional(),
  spread: price8.optional(),
  timestamp: isoTimestamp,
});

export const clobPriceBatchResponse = z.object({ data: z.array(clobPriceSnapshot) });

// ---------------------------------------------------------------------------------------------
// Market data proxy

export const marketDataSnapshot = z.object({
  market_id: uuid,
  midpoint_price: price8,
  best_bid: price8,
  best_ask: price8,
  spread: price8,
  timestamp: isoTimestamp,
});
export const marketDataBatchResponse = z.object({ ...ok, data: z.array(marketDataSnapshot) });

// ---------------------------------------------------------------------------------------------
// Markets

/** Status spellings beyond ACTIVE are not shown upstream; the simulator's choice is in docs/upstream.md. */
export const marketStatus = z.string().min(1);

/**
 * The list form keeps the fields upstream adds (`anyJson`), as the activity and probability entries
 * below do: the `markets`, `trades` and `probabilities` channels pass records on as upstream served
 * them. Other schemas drop what they do not name.
 */
export const marketListItem = z
  .object({
    market_id: uuid,
    title: z.string(),
    status: marketStatus,
    exchange_address: hexString,
    oracle_address: hexString,
    expiration_timestamp: isoTimestamp,
    taker_fee_bps: z.number().int(),
    probability: z.number(),
    volume: z.number(),
  })
  .catchall(anyJson);

/**
 * `schema`'s checks, with the value as received rather than zod's copy of it: zod builds the
 * objects it returns by assignment, so a member named `__proto__` (JSON may have one, and
 * JSON.parse keeps it as a member) would set the copy's prototype and be lost. Only for a schema
 * that transforms nothing, of a record streamed as received.
 */
function asReceived<T>(schema: z.ZodType<T>): z.ZodType<T> {
  return z.unknown().superRefine((value, context) => {
    const parsed = schema.safeParse(value);
    if (parsed.success) return;
    for (const issue of parsed.error.issues)
      context.addIssue({ code: 'custom', message: issue.message, path: issue.path });
  }) as unknown as z.ZodType<T>;
}

/**
 * The detail form adds to the list form; it is documented to show the fields below, and other
 * fields of the record (the list form's `taker_fee_bps`, anything upstream adds, `__proto__`
 * included) are kept as the JSON they are: the `market` channel streams the record as received.
 */
const marketDetailFields = z
  .object({
    market_id: uuid,
    market_name: z.string(),
    title: z.string(),
    question: z.string(),
    status: marketStatus,
    exchange_address: hexString,
    oracle_address: hexString,
    oracle_feed_id: hexString,
    probability: z.number(),
    volume: z.number(),
    expiration_timestamp: isoTimestamp,
  })
  .catchall(anyJson);
export const marketDetail = asReceived(marketDetailFields);

export const marketsResponse = z.object({ ...ok, markets: z.array(marketListItem), pagination });
export const marketResponse = z.object({ ...ok, market: marketDetail });

export const historyPoint = z.object({
  time: isoTimestamp,
  midpoint_price: z.number(),
  best_bid: z.number(),
  best_ask: z.number(),
  spread: z.number(),
  probability: z.number(),
});
export const historyResponse = z.object({ ...ok, market_id: uuid, history: z.array(historyPoint) });

export const holder = z.object({
  username: z.string(),
  wallet_address: z.string(),
  quantity: z.number(),
  average_entry_price: z.number(),
});
export const holderSide = z.enum(['YES', 'NO']);
export const holdersResponse = z.object({
  ...ok,
  market_id: uuid,
  type: holderSide,
  holders: z.array(holder),
  pagination,
});

export const commentAuthor = z.object({
  user_id: z.string(),
  username: z.string(),
  wallet_address: z.string(),
});
export const commentReply = z.object({
  comment_id: z.string(),
  depth: z.literal(1),
  content: z.string(),
  like_count: z.number().int(),
  liked_by_me: z.boolean(),
  author: commentAuthor,
});
export const comment = commentReply.extend({ depth: z.literal(0), replies: z.array(commentReply) });
export const commentsResponse = z.object({ ...ok, market_id: uuid, comments: z.array(comment), pagination });

export const marketActivityEntry = z
  .object({
    activity_id: z.string(),
    activity_type: z.string(),
    price: decimalString,
    size: decimalString,
    total_value: decimalString,
    activity_timestamp: isoTimestamp,
  })
  .catchall(anyJson);
export const marketActivityResponse = z.object({
  ...ok,
  market_id: uuid,
  activity: z.array(marketActivityEntry),
  pagination: paginationWithoutTotal,
});

export const probabilityEntry = z
  .object({
    midpoint: z.number(),
    best_bid: z.number(),
    best_ask: z.number(),
    last_trade_price: z.number(),
    timestamp: isoTimestamp,
  })
  .catchall(anyJson);
export const probabilitiesResponse = z.object({ ...ok, probabilities: z.record(uuid, probabilityEntry) });

// ---------------------------------------------------------------------------------------------
// Search and tokens

export const token = z.object({
  id: z.number().int(),
  oracle_feed_id: hexString,
  symbol: z.string(),
  name: z.string(),
  asset_type: z.string(),
});
export const tokenDetail = token.extend({ logo_url: z.url(), country: z.string(), sector: z.string() });
export const tokenSearchItem = token.omit({ oracle_feed_id: true });

export const searchResponse = z.object({
  ...ok,
  results: z.object({
    markets: z.array(z.object({ market_id: uuid, title: z.string(), status: marketStatus })),
    users: z.array(z.object({ user_id: z.string(), username: z.string(), wallet_address: z.string() })),
    tokens: z.array(tokenSearchItem),
  }),
});
export const tokensResponse = z.object({ ...ok, tokens: z.array(token) });
export const tokenResponse = z.object({ ...ok, token: tokenDetail });
export const tokenPriceResponse = z.object({
  ...ok,
  feed_id: hexString,
  price: z.number(),
  raw_price: integerString,
  expo: z.number().int(),
  publish_time: z.number().int(),
});

// ---------------------------------------------------------------------------------------------
// Health

export const upstreamHealth = z.object({
  status: z.string(),
  timestamp: isoTimestamp,
  services: z.object({ database: z.boolean(), message_queue: z.boolean(), settlement: z.boolean() }),
});

// ---------------------------------------------------------------------------------------------
// Derived types

export type OrderEntry = z.infer<typeof orderEntry>;
export type OrderBook = z.infer<typeof orderBook>;
export type ClobPriceSnapshot = z.infer<typeof clobPriceSnapshot>;
export type ClobPriceBatchResponse = z.infer<typeof clobPriceBatchResponse>;
export type MarketDataSnapshot = z.infer<typeof marketDataSnapshot>;
export type MarketDataBatchResponse = z.infer<typeof marketDataBatchResponse>;
export type MarketListItem = z.infer<typeof marketListItem>;
export type MarketDetail = z.infer<typeof marketDetail>;
export type MarketsResponse = z.infer<typeof marketsResponse>;
export type MarketResponse = z.infer<typeof marketResponse>;
export type HistoryPoint = z.infer<typeof historyPoint>;
export type HistoryResponse = z.infer<typeof historyResponse>;
/** The `interval` a history request takes, spelled as upstream lists it. */
export type HistoryInterval = '1h' | '24h' | '7d' | '30d' | 'all';
export type HolderSide = z.infer<typeof holderSide>;
export type HoldersResponse = z.infer<typeof holdersResponse>;
export type Comment = z.infer<typeof comment>;
export type CommentReply = z.infer<typeof commentReply>;
export type CommentsResponse = z.infer<typeof commentsResponse>;
export type MarketActivityResponse = z.infer<typeof marketActivityResponse>;
export type ProbabilityEntry = z.infer<typeof probabilityEntry>;
export type ProbabilitiesResponse = z.infer<typeof probabilitiesResponse>;
export type SearchResponse = z.infer<typeof searchResponse>;
export type TokensResponse = z.infer<typeof tokensResponse>;
export type TokenResponse = z.infer<typeof tokenResponse>;
export type TokenPriceResponse = z.infer<typeof tokenPriceResponse>;
export type UpstreamHealth = z.infer<typeof upstreamHealth>;
