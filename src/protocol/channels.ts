/**
 * @module protocol/channels
 * The channels and what each one's stream ids are (docs/protocol.md, one section per channel),
 * declared once with the one function that checks and spells a stream id. Imports only ./limits.ts,
 * so both the request schemas (./requests.ts) and the wire types (./messages.ts) can use it.
 */
import { FEED_ID_PATTERN, MARKET_ID_PATTERN } from './limits.ts';

export const channels = [
  'book',
  'price',
  'trades',
  'market',
  'probabilities',
  'oracle',
  'orders',
  'markets',
] as const;
export type Channel = (typeof channels)[number];

export function isChannel(name: string): name is Channel {
  return (channels as readonly string[]).includes(name);
}

/** `trades`: a snapshot carries this many of the most recent entries (and a client keeps as many). */
export const TRADES_SNAPSHOT_SIZE = 50;

/** The `probabilities` channel's one stream: every market's entry in one map. */
export const PROBABILITIES_STREAM = 'all';

/**
 * The `markets` channel's streams: the whole catalogue (`all`), or the markets of one status, as
 * upstream's `statusFilter` names them.
 */
export const catalogueStreams = ['all', 'active', 'expired', 'resolved'] as const;
export type CatalogueStream = (typeof catalogueStreams)[number];

/**
 * What a channel's stream ids (the `markets` of a subscribe) are: a market UUID, an oracle feed id
 * (`0x` + hex), the one stream {@link PROBABILITIES_STREAM}, or a {@link CatalogueStream}.
 */
export type StreamIdKind = 'market' | 'feed' | 'all' | 'catalogue';
export const streamIdKinds: Readonly<Record<Channel, StreamIdKind>> = {
  book: 'market',
  price: 'market',
  trades: 'market',
  market: 'market',
  probabilities: 'all',
  oracle: 'feed',
  orders: 'market',
  markets: 'catalogue',
};

/** What a stream id of each kind must look like, worded for a `bad_request` message. */
const expectedIds: Readonly<Record<StreamIdKind, string>> = {
  market: 'not a UUID',
  feed: 'not an oracle feed id (0x and hex digits)',
  all: `the probabilities channel has one stream: "${PROBABILITIES_STREAM}"`,
  catalogue: `the markets channel's streams are ${catalogueStreams.map((id) => `"${id}"`).join(', ')}`,
};

/**
 * A stream id in its one spelling (ids are case-insensitive: lower case), or the reason it is not
 * an id of `channel`.
 */
export function canonicalStreamId(
  channel: Channel,
  id: string,
): { ok: true; id: string } | { ok: false; message: string } {
  const kind = streamIdKinds[channel];
  const valid =
    kind === 'market'
      ? MARKET_ID_PATTERN.test(id)
      : kind === 'feed'
        ? FEED_ID_PATTERN.test(id)
        : kind === 'all'
          ? id === PROBABILITIES_STREAM
          : (catalogueStreams as readonly string[]).includes(id);
  return valid ? { ok: true, id: id.toLowerCase() } : { ok: false, message: expectedIds[kind] };
}
