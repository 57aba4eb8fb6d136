/**
 * @module protocol/limits
 * The shapes and limits every side agrees on, declared once and importing nothing: the relay's
 * request schemas, the upstream schemas, the simulator and the client SDK all check market ids and
 * request sizes with these (docs/protocol.md "Client -> relay", docs/upstream.md).
 */

/** Market ids are UUIDs of any version, either case (upstream only says "UUID string"). */
export const MARKET_ID_PATTERN =
  /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function isMarketId(value: string): boolean {
  return MARKET_ID_PATTERN.test(value);
}

/** Longest stream id a request may carry (a `0x` feed id of 128 hex digits). */
export const MAX_STREAM_ID_LENGTH = 130;

/** Markets in one `subscribe` / `unsubscribe` request. */
export const MAX_MARKETS_PER_REQUEST = 100;

/** The bounds of a subscription's `interval` in ms (docs/protocol.md "Per-subscription options"). */
export const MIN_INTERVAL_MS = 100;
export const MAX_INTERVAL_MS = 60_000;

/**
 * A `price` subscription's `threshold` (docs/protocol.md "Per-subscription options"): a decimal
 * string above 0, at most `MAX_THRESHOLD`, with at most `MAX_THRESHOLD_DECIMALS` places (upstream's
 * prices have 8). A change withheld below it goes out, as the catch-up, with the
 * `THRESHOLD_CATCH_UP_POLLS`-th poll of the stream after the one that brought it, if the stream
 * still differs from what the subscriber was last sent. Counted in polls, not milliseconds, so the
 * catch-up can never come as often as the changes do, whatever the poll interval: at most one in
 * `THRESHOLD_CATCH_UP_POLLS + 1` polls (10 s at the default 1 s price poll).
 */
export const MAX_THRESHOLD = '1';
export const MAX_THRESHOLD_DECIMALS = 8;
export const THRESHOLD_CATCH_UP_POLLS = 10;

/** Longest string request `id` the relay echoes back. */
export const MAX_REQUEST_ID_LENGTH = 128;
