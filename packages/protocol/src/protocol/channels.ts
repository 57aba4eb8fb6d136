/**
 * @module protocol/channels
 * The channels and what each one's stream ids are (docs/protocol.md, one section per channel),
 * declared once with the one function that checks and spells a stream id. Imports only the channel
 * registry, ./limits.ts and ./rest-paths.ts, so both the request schemas (./requests.ts) and the
 * wire types (./messages.ts) can use it.
 */
import type { StreamIdKind } from '../channels/definition.ts';
import {
  MARKET_IDS,
  PATH_FIELD,
  PATHS_FIELD,
  STREAM_ID_FIELD,
  STREAM_IDS_FIELD,
} from '../channels/definition.ts';
import {
  channelDefinitions,
  channelNames,
  channelWires,
  idsArePaths,
  isDefinedChannel,
  wildcardChannels,
} from '../channels/registry.ts';
import { MARKET_ID_PATTERN } from './limits.ts';
import { canonicalRestPath } from './rest-paths.ts';

/** Every channel, in the order docs/protocol.md gives them (channels/registry.ts lists them). */
export const channels = channelNames;
export type Channel = (typeof channels)[number];

export function isChannel(name: string): name is Channel {
  return (channels as readonly string[]).includes(name);
}

/** A subscribe's `markets: ["*"]`: every active market, on the channels that take it. */
export const WILDCARD = '*';
export { wildcardChannels };
export type WildcardChannel = (typeof wildcardChannels)[number];

export function isWildcardChannel(channel: string): channel is WildcardChannel {
  return (wildcardChannels as readonly string[]).includes(channel);
}

/** Whether a selection's stream ids are the wildcard (which stands alone). */
export function isWildcard(ids: readonly string[]): boolean {
  return ids.length === 1 && ids[0] === WILDCARD;
}

/**
 * The `markets` channel's streams are upstream's catalogue filters: a status as its `statusFilter`
 * names them (`all` for every market), optionally with `:` and a token id (its `tokenId`):
 * `active`, `all:3`. One spelling each: the token id without leading zeros.
 */
export const catalogueStatuses = ['all', 'active', 'expired', 'resolved'] as const;
export type CatalogueStatus = (typeof catalogueStatuses)[number];
export interface CatalogueFilter {
  status?: CatalogueStatus;
  /** Upstream's token id: only the markets of that token. */
  token?: number;
}
const CATALOGUE_STREAM = /^(all|active|expired|resolved)(?::(\d{1,9}))?$/;

/** A catalogue stream's filter, or undefined for an id that is not one. */
export function catalogueFilterOf(id: string): { status: CatalogueStatus; token?: number } | undefined {
  const match = CATALOGUE_STREAM.exec(id);
  if (match === null) return undefined;
  const status = match[1] as CatalogueStatus;
  return match[2] === undefined ? { status } : { status, token: Number(match[2]) };
}

/** The stream id of a catalogue filter (default: every market). */
export function catalogueStreamId(filter: CatalogueFilter = {}): string {
  const status = filter.status ?? 'all';
  return filter.token === undefined ? status : `${status}:${filter.token}`;
}

/**
 * What each channel's stream ids (the `markets` of a subscribe) are (channels/definition.ts);
 * `rest` paths a subscribe names as `paths` and messages carry as `path`.
 */
export const streamIdKinds = Object.fromEntries(
  channels.map((channel) => [channel, channelWires[channel].streamIds.kind]),
) as Readonly<Record<Channel, StreamIdKind>>;

/** What a stream id of each kind must look like, worded for a `bad_request` message. */
const expectedIds: Readonly<Record<typeof MARKET_IDS | 'catalogue', string>> = {
  [MARKET_IDS]: 'not a UUID',
  catalogue: `the markets channel's streams are ${catalogueStatuses.map((id) => `"${id}"`).join(', ')}, each optionally with ":" and a token id`,
};

/**
 * A stream id in its one spelling (ids are case-insensitive: lower case; paths as
 * ./rest-paths.ts spells them), or the reason it is not an id of `channel` (with `code` when the
 * answer is not `bad_request`).
 */
export function canonicalStreamId(
  channel: Channel,
  id: string,
): { ok: true; id: string } | { ok: false; message: string; code?: 'path_not_public' } {
  if (isDefinedChannel(channel)) {
    const { canonical, expected } = channelDefinitions[channel].streamIds;
    if (canonical !== undefined) {
      const spelled = canonical(id);
      return spelled === undefined
        ? { ok: false, message: expected ?? 'not a stream id' }
        : { ok: true, id: spelled };
    }
  }
  const kind = streamIdKinds[channel];
  if (kind === 'path') {
    const path = canonicalRestPath(id);
    if (path.ok) return { ok: true, id: path.value.path };
    return path.code === 'bad_request'
      ? { ok: false, message: path.message }
      : { ok: false, message: path.message, code: path.code };
  }
  if (kind === 'catalogue') {
    const filter = catalogueFilterOf(id);
    return filter === undefined
      ? { ok: false, message: expectedIds[kind] }
      : { ok: true, id: catalogueStreamId(filter) };
  }
  // A kind the protocol has no grammar for is spelled by its channel's definition, above.
  if (kind === 'feed' || kind === 'all' || kind === 'of-market')
    return { ok: false, message: 'not a stream id' };
  return MARKET_ID_PATTERN.test(id)
    ? { ok: true, id: id.toLowerCase() }
    : { ok: false, message: expectedIds[kind] };
}

/**
 * The market a stream id (in its one spelling) is of: the id itself on a market's channels, the
 * market its definition reads in an `of-market` id; undefined for a stream of no one market.
 */
export function marketOfStreamId(channel: Channel, id: string): string | undefined {
  const kind = streamIdKinds[channel];
  if (kind === MARKET_IDS) return id;
  if (kind !== 'of-market' || !isDefinedChannel(channel)) return undefined;
  return channelDefinitions[channel].streamIds.marketOf?.(id);
}

/** What a channel's stream id names upstream, in "... does not exist upstream": `market` unless said. */
export function streamIdNoun(channel: Channel): string {
  if (isDefinedChannel(channel)) {
    const { noun } = channelDefinitions[channel].streamIds;
    if (noun !== undefined) return noun;
  }
  return streamIdKinds[channel] === 'path' ? PATH_FIELD : MARKET_IDS;
}

/** The wire's names of the stream-id fields on a channel of paths. */
const wireNames: ReadonlyMap<string, string> = new Map([
  [STREAM_ID_FIELD, PATH_FIELD],
  [STREAM_IDS_FIELD, PATHS_FIELD],
]);

/**
 * A relay message as it goes on the wire: on the `rest` channel its stream id is `path` (a
 * `subscribed` or `unsubscribed` lists `paths`), where the relay's own objects say `market`.
 */
export function onTheWire<M extends object>(message: M): M | Record<string, unknown> {
  const { channel } = message as { channel?: unknown };
  if (typeof channel !== 'string' || !idsArePaths(channel)) return message;
  return Object.fromEntries(
    Object.entries(message)
      .filter(([name]) => name !== PATH_FIELD && name !== PATHS_FIELD)
      .map(([name, value]) => [wireNames.get(name) ?? name, value]),
  );
}

/** A message read off the wire, with a `rest` stream's `path` (or `paths`) also as `market` (`markets`). */
export function offTheWire<M extends object>(message: M): M {
  const fields = message as { channel?: unknown; path?: unknown; paths?: unknown };
  if (typeof fields.channel !== 'string' || !idsArePaths(fields.channel)) return message;
  return {
    ...message,
    ...(fields.path === undefined ? {} : { [STREAM_ID_FIELD]: fields.path }),
    ...(fields.paths === undefined ? {} : { [STREAM_IDS_FIELD]: fields.paths }),
  };
}
