/**
 * @module relay/session/own-view
 * The two requests about a connection's own subscriptions (docs/protocol.md "Listing
 * subscriptions", "Changing a subscription"): `list`, answered from what the session holds, and
 * `update`, planned here whole before anything moves, so that a request naming one market the
 * connection does not hold changes nothing at all.
 */
import { isChannel } from '../../../packages/protocol/src/protocol/channels.ts';
import type {
  BookDepth,
  ConnectionLimits,
  RequestId,
  SubscriptionEntry,
  SubscriptionsMessage,
  UpdateRequest,
} from '../../../packages/protocol/src/protocol/messages.ts';
import { streamKey } from '../../../packages/protocol/src/util/keys.ts';
import type { StreamPosition } from '../streams/frame.ts';
import type { AnyStream } from '../streams/stream.ts';
import { withId } from './echo.ts';

export type UpdatePlan =
  | {
      ok: true;
      depth: BookDepth;
      markets: string[];
      /** Markets whose stream of the new depth is to be joined. */
      join: string[];
      /** The book streams left for the new depth. */
      leave: AnyStream[];
    }
  | { ok: false; code: 'bad_request' | 'unknown_channel'; message: string };

function depthName(depth: BookDepth | undefined): string {
  return depth === null || depth === undefined ? 'full' : String(depth);
}

/**
 * What an `update` changes, or why it is refused: each market's held book stream (the one of
 * `from_depth` when named, else the only depth held) moves to `depth`.
 */
export function planUpdate(request: UpdateRequest, held: ReadonlyMap<string, AnyStream>): UpdatePlan {
  const { channel } = request;
  if (!isChannel(channel))
    return { ok: false, code: 'unknown_channel', message: `unknown channel "${channel}"` };
  if (channel !== 'book')
    return {
      ok: false,
      code: 'bad_request',
      message: `nothing to update: the ${channel} channel has no options`,
    };
  if (request.depth === undefined)
    return { ok: false, code: 'bad_request', message: 'nothing to update: name the new `depth`' };
  const depth = request.depth;
  const markets = [...new Set(request.markets)];
  const books = new Map<string, AnyStream[]>();
  for (const stream of held.values()) {
    if (stream.channel !== 'book') continue;
    books.set(stream.market, [...(books.get(stream.market) ?? []), stream]);
  }
  const join: string[] = [];
  const leave: AnyStream[] = [];
  const problems: string[] = [];
  for (const market of markets) {
    const depths = books.get(market) ?? [];
    const named = request.from_depth;
    const candidates = named === undefined ? depths : depths.filter((stream) => stream.depth === named);
    if (candidates.length === 0) {
      problems.push(
        named === undefined
          ? `book ${market} is not held on this connection`
          : `book ${market} at depth ${depthName(named)} is not held on this connection`,
      );
    } else if (candidates.length > 1) {
      problems.push(`book ${market} is held at several depths: name the one to move in "from_depth"`);
    } else {
      const [from] = candidates;
      if (from === undefined || from.depth === depth) continue;
      leave.push(from);
      if (!held.has(streamKey('book', market, depth))) join.push(market);
    }
  }
  if (problems.length > 0) return { ok: false, code: 'bad_request', message: problems.join('; ') };
  return { ok: true, depth, markets, join, leave };
}

/** The answer to `list`: each stream held, then each `"*"` subscription, and the limits' use. */
export function subscriptionsMessage(
  id: RequestId | undefined,
  held: ReadonlyMap<string, AnyStream>,
  lastSent: ReadonlyMap<string, StreamPosition>,
  wildcards: readonly string[],
  limits: ConnectionLimits,
): SubscriptionsMessage {
  return {
    type: 'subscriptions',
    ...withId(id),
    subscriptions: listEntries(held.values(), lastSent, wildcards),
    limits,
  };
}

/** Each market's book stream number on a compact connection, for the streams held. */
export function streamNumbers(
  held: ReadonlyMap<string, AnyStream>,
  markets: readonly string[],
  depth: BookDepth | undefined,
): Record<string, number> {
  return Object.fromEntries(
    markets.flatMap((market) => {
      const stream = held.get(streamKey('book', market, depth));
      return stream === undefined ? [] : [[market, stream.number]];
    }),
  );
}

function listEntries(
  held: Iterable<AnyStream>,
  lastSent: ReadonlyMap<string, StreamPosition>,
  wildcards: readonly string[],
): SubscriptionEntry[] {
  const entries: SubscriptionEntry[] = [];
  for (const stream of held) {
    const sent = lastSent.get(stream.key);
    entries.push({
      channel: stream.channel,
      market: stream.market,
      ...(stream.channel === 'book' ? { depth: stream.depth ?? null } : {}),
      epoch: sent?.epoch ?? null,
      seq: sent?.seq ?? null,
      status: stream.freshness,
    });
  }
  for (const channel of wildcards) {
    if (!isChannel(channel)) continue;
    entries.push({ channel, market: '*', epoch: null, seq: null, wildcard: true });
  }
  return entries;
}
