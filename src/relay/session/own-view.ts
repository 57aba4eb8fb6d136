/**
 * @module relay/session/own-view
 * The two requests about a connection's own subscriptions (docs/protocol.md "Listing
 * subscriptions", "Changing a subscription"): `list`, answered from what the session holds, and
 * `update`, planned here whole before anything moves, so that a request naming one market the
 * connection does not hold changes nothing at all.
 */

import { streamKey } from '../../../packages/protocol/src/channels/stream-key.ts';
import { isChannel } from '../../../packages/protocol/src/protocol/channels.ts';
import type {
  BookDepth,
  Channel,
  ConnectionLimits,
  RequestId,
  SubscriptionEntry,
  SubscriptionOptions,
  SubscriptionsMessage,
  UpdateRequest,
} from '../../../packages/protocol/src/protocol/messages.ts';
import { type DepthChannel, hasDepths, hasThreshold } from '../channels/relay-registry.ts';
import type { StreamPosition } from '../streams/frame.ts';
import type { AnyStream, StreamSubscriber } from '../streams/stream.ts';
import { optionsInForce, withId } from './echo.ts';
import { groupRefused, intervalRefused, pacedChannel, thresholdRefused } from './subscription.ts';

export type UpdatePlan =
  | {
      ok: true;
      channel: Channel;
      /** The book depth moved to, when the update names one. */
      depth: BookDepth | undefined;
      /**
       * The book group in force once the update is done, when it is one step for every market
       * named (what `subscribed` echoes, so a compact connection numbers the streams right).
       */
      group: string | undefined;
      markets: string[];
      /** The book streams (market, depth, group) to be joined for the new depth or group. */
      join: BookView[];
      /** The book streams left for the new depth or group. */
      leave: AnyStream[];
      /** The new pace (null: every change), undefined when the update names none. */
      interval: number | null | undefined;
      /** The new threshold (null: none), undefined when the update names none. */
      threshold: string | null | undefined;
      /** Each market's stream key once the update is done (what the new pace applies to). */
      keys: string[];
    }
  | { ok: false; code: 'bad_request' | 'unknown_channel'; message: string };

/** One book stream of a market: its depth and group step (undefined: ungrouped). */
export interface BookView {
  market: string;
  depth: BookDepth;
  group: string | undefined;
}

function depthName(depth: BookDepth | undefined): string {
  return depth === null || depth === undefined ? 'full' : String(depth);
}

function viewName(depth: BookDepth | undefined, group: string | null | undefined): string {
  return `depth ${depthName(depth)}${group == null ? '' : ` group ${group}`}`;
}

type Refused = Extract<UpdatePlan, { ok: false }>;

/**
 * What an `update` changes, or why it is refused: each market's held book stream (the one of
 * `from_depth` when named, else the only depth held) moves to `depth`, and each market's stream
 * takes the new `interval` and `threshold`, in place (the stream stays the same: no new snapshot).
 */
export function planUpdate(request: UpdateRequest, held: ReadonlyMap<string, AnyStream>): UpdatePlan {
  const { channel, interval, threshold } = request;
  if (!isChannel(channel))
    return { ok: false, code: 'unknown_channel', message: `unknown channel "${channel}"` };
  if (interval !== undefined && !pacedChannel(channel))
    return { ok: false, code: 'bad_request', message: intervalRefused(channel) };
  if (threshold !== undefined && !hasThreshold(channel))
    return { ok: false, code: 'bad_request', message: thresholdRefused(channel) };
  const markets = [...new Set(request.markets)];
  if (!hasDepths(channel)) {
    if (interval === undefined && threshold === undefined)
      return { ok: false, code: 'bad_request', message: nothingNamed(channel) };
    if (request.depth !== undefined || request.from_depth !== undefined)
      return { ok: false, code: 'bad_request', message: '`depth` applies to the book channel only' };
    if (request.group !== undefined || request.from_group !== undefined)
      return { ok: false, code: 'bad_request', message: groupRefused };
    const keys = markets.map((market) => streamKey(channel, market, undefined));
    const missing = markets.filter((_, i) => !held.has(keys[i] ?? ''));
    if (missing.length > 0) return { ok: false, code: 'bad_request', message: notHeld(channel, missing) };
    const unchanged = { depth: undefined, group: undefined, join: [], leave: [] };
    return { ok: true, channel, markets, ...unchanged, interval, threshold, keys };
  }
  if (request.depth === undefined && request.group === undefined && interval === undefined)
    return {
      ok: false,
      code: 'bad_request',
      message: 'nothing to update: name the new `depth`, `group` or `interval`',
    };
  return planBook(channel, request, markets, held);
}

function nothingNamed(channel: Channel): string {
  return hasThreshold(channel)
    ? 'nothing to update: name the new "interval" or "threshold"'
    : 'nothing to update: name the new "interval"';
}

function notHeld(channel: string, markets: readonly string[]): string {
  return markets.map((market) => `${channel} ${market} is not held on this connection`).join('; ');
}

function planBook(
  channel: DepthChannel,
  request: UpdateRequest,
  markets: string[],
  held: ReadonlyMap<string, AnyStream>,
): UpdatePlan | Refused {
  const { depth, group, interval } = request;
  // `group` as the request names it: null moves to the ungrouped book, undefined keeps each stream's.
  const books = new Map<string, AnyStream[]>();
  for (const stream of held.values()) {
    if (stream.channel !== channel) continue;
    books.set(stream.market, [...(books.get(stream.market) ?? []), stream]);
  }
  const join: BookView[] = [];
  const leave: AnyStream[] = [];
  const keys: string[] = [];
  const problems: string[] = [];
  const groupsInForce = new Set<string | undefined>();
  for (const market of markets) {
    const views = books.get(market) ?? [];
    const { from_depth: namedDepth, from_group: namedGroup } = request;
    const candidates = views.filter(
      (stream) =>
        (namedDepth === undefined || stream.depth === namedDepth) &&
        (namedGroup === undefined || stream.group === (namedGroup ?? undefined)),
    );
    const [from] = candidates;
    if (from === undefined) {
      problems.push(
        namedDepth === undefined && namedGroup === undefined
          ? `book ${market} is not held on this connection`
          : `book ${market} at ${viewName(namedDepth, namedGroup)} is not held on this connection`,
      );
    } else if (candidates.length > 1) {
      problems.push(
        `book ${market} is held at several depths or groups: name the one to move in "from_depth" and "from_group"`,
      );
    } else {
      const to: BookView = {
        market,
        depth: depth === undefined ? (from.depth ?? null) : depth,
        group: group === undefined ? from.group : (group ?? undefined),
      };
      const key = streamKey(channel, market, to.depth, to.group);
      keys.push(key);
      groupsInForce.add(to.group);
      if (key === from.key) continue;
      leave.push(from);
      if (!held.has(key)) join.push(to);
    }
  }
  if (problems.length > 0) return { ok: false, code: 'bad_request', message: problems.join('; ') };
  return {
    ok: true,
    channel,
    depth,
    group: groupsInForce.size === 1 ? [...groupsInForce][0] : undefined,
    markets,
    join,
    leave,
    interval,
    threshold: undefined,
    keys,
  };
}

/** Each left stream's pace for `subscriber`, by market: a book moved to another depth keeps it. */
export function pacesOf(
  left: readonly AnyStream[],
  subscriber: StreamSubscriber,
): Map<string, number | undefined> {
  return new Map(left.map((stream) => [stream.market, stream.subscribers.intervalOf(subscriber)]));
}

/**
 * Each market's stream after an update takes the pace and threshold named, else keeps its own (a
 * book moved to another depth: the pace `kept` of its old depth). A paced or gated stream may have
 * moved past what the client was last sent, a change its old contract still owed: the client gets
 * the current snapshot then, as it would have at the end of that interval or with its catch-up.
 */
export function pace(
  plan: Extract<UpdatePlan, { ok: true }>,
  view: HeldView,
  subscriber: StreamSubscriber,
  kept: ReadonlyMap<string, number | undefined>,
): void {
  plan.markets.forEach((market, i) => {
    const stream = view.held.get(plan.keys[i] ?? '');
    if (stream === undefined) return;
    const was = { interval: view.intervalOf(stream), threshold: view.thresholdOf(stream) };
    const interval =
      plan.interval !== undefined
        ? (plan.interval ?? undefined)
        : kept.has(market)
          ? kept.get(market)
          : was.interval;
    const threshold = plan.threshold === undefined ? was.threshold : (plan.threshold ?? undefined);
    if (interval === was.interval && threshold === was.threshold) return;
    stream.subscribers.pace(subscriber, interval, threshold);
    const sent = view.lastSent.get(stream.key);
    const behind = sent !== undefined && (sent.epoch !== stream.epoch || sent.seq !== stream.seq);
    const held = was.interval !== undefined || was.threshold !== undefined;
    if (held && behind && stream.hasState) subscriber.deliver(stream, stream.snapshotFrame(), 'snapshot');
  });
}

/** The answer to `list`: each stream held, then each `"*"` subscription, and the limits' use. */
export function subscriptionsMessage(
  id: RequestId | undefined,
  view: HeldView,
  wildcards: readonly string[],
  limits: ConnectionLimits,
): SubscriptionsMessage {
  return {
    type: 'subscriptions',
    ...withId(id),
    subscriptions: listEntries(view, wildcards),
    limits,
  };
}

/** Each market's stream number on a compact connection, for the streams held (by stream key). */
export function streamNumbers(
  held: ReadonlyMap<string, AnyStream>,
  markets: readonly string[],
  keys: readonly string[],
): Record<string, number> {
  return Object.fromEntries(
    markets.flatMap((market, i) => {
      const stream = held.get(keys[i] ?? '');
      return stream === undefined ? [] : [[market, stream.number]];
    }),
  );
}

/** Each market's options in force once an update is done (by stream key), as `subscribed` names them. */
export function optionsOf(
  held: ReadonlyMap<string, AnyStream>,
  markets: readonly string[],
  keys: readonly string[],
  holder: StreamSubscriber,
): Map<string, SubscriptionOptions> {
  return new Map(
    markets.flatMap((market, i) => {
      const stream = held.get(keys[i] ?? '');
      return stream === undefined ? [] : [[market, optionsInForce(stream, holder)] as const];
    }),
  );
}

/** What a session holds, as `list` shows it. */
export interface HeldView {
  held: ReadonlyMap<string, AnyStream>;
  /** Per stream key: the position of the last stream message written to the client. */
  lastSent: ReadonlyMap<string, StreamPosition>;
  /** The stream's pace for this session (ms), undefined: every change. */
  intervalOf(stream: AnyStream): number | undefined;
  /** The stream's threshold for this session, undefined: none. */
  thresholdOf(stream: AnyStream): string | undefined;
  /** Every option this session holds the stream with (./echo.ts). */
  optionsOf(stream: AnyStream): SubscriptionOptions;
  /** The `since` the stream was subscribed with, if any. */
  sinceOf(stream: AnyStream): string | undefined;
}

export function heldView(
  held: ReadonlyMap<string, AnyStream>,
  lastSent: ReadonlyMap<string, StreamPosition>,
  subscriber: StreamSubscriber,
  since?: { askedOf(stream: AnyStream): string | undefined },
): HeldView {
  return {
    held,
    lastSent,
    sinceOf: (stream) => since?.askedOf(stream),
    intervalOf: (stream) => stream.subscribers.intervalOf(subscriber),
    thresholdOf: (stream) => stream.subscribers.thresholdOf(subscriber),
    optionsOf: (stream) => optionsInForce(stream, subscriber),
  };
}

function listEntries(view: HeldView, wildcards: readonly string[]): SubscriptionEntry[] {
  const entries: SubscriptionEntry[] = [];
  for (const stream of view.held.values()) {
    const sent = view.lastSent.get(stream.key);
    const since = view.sinceOf(stream);
    entries.push({
      channel: stream.channel,
      market: stream.market,
      epoch: sent?.epoch ?? null,
      seq: sent?.seq ?? null,
      ...view.optionsOf(stream),
      ...(since === undefined ? {} : { since }),
      status: stream.freshness,
    });
  }
  for (const channel of wildcards) {
    if (!isChannel(channel)) continue;
    entries.push({ channel, market: '*', epoch: null, seq: null, wildcard: true });
  }
  return entries;
}
