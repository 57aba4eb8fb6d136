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
  Channel,
  ConnectionLimits,
  RequestId,
  SubscriptionEntry,
  SubscriptionOptions,
  SubscriptionsMessage,
  UpdateRequest,
} from '../../../packages/protocol/src/protocol/messages.ts';
import { streamKey } from '../../../packages/protocol/src/util/stream-key.ts';
import type { StreamPosition } from '../streams/frame.ts';
import type { AnyStream, StreamSubscriber } from '../streams/stream.ts';
import { optionsInForce, withId } from './echo.ts';
import { intervalRefused, pacedChannel, thresholdChannel, thresholdRefused } from './subscription.ts';

export type UpdatePlan =
  | {
      ok: true;
      channel: Channel;
      /** The book depth moved to, when the update names one. */
      depth: BookDepth | undefined;
      markets: string[];
      /** Markets whose stream of the new depth is to be joined. */
      join: string[];
      /** The book streams left for the new depth. */
      leave: AnyStream[];
      /** The new pace (null: every change), undefined when the update names none. */
      interval: number | null | undefined;
      /** The new threshold (null: none), undefined when the update names none. */
      threshold: string | null | undefined;
      /** Each market's stream key once the update is done (what the new pace applies to). */
      keys: string[];
    }
  | { ok: false; code: 'bad_request' | 'unknown_channel'; message: string };

function depthName(depth: BookDepth | undefined): string {
  return depth === null || depth === undefined ? 'full' : String(depth);
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
  if (threshold !== undefined && !thresholdChannel(channel))
    return { ok: false, code: 'bad_request', message: thresholdRefused(channel) };
  const markets = [...new Set(request.markets)];
  if (channel !== 'book') {
    if (interval === undefined && threshold === undefined)
      return { ok: false, code: 'bad_request', message: nothingNamed(channel) };
    if (request.depth !== undefined || request.from_depth !== undefined)
      return { ok: false, code: 'bad_request', message: '`depth` applies to the book channel only' };
    const keys = markets.map((market) => streamKey(channel, market, undefined));
    const missing = markets.filter((_, i) => !held.has(keys[i] ?? ''));
    if (missing.length > 0) return { ok: false, code: 'bad_request', message: notHeld(channel, missing) };
    return { ok: true, channel, depth: undefined, markets, join: [], leave: [], interval, threshold, keys };
  }
  if (request.depth === undefined && interval === undefined)
    return {
      ok: false,
      code: 'bad_request',
      message: 'nothing to update: name the new `depth` or `interval`',
    };
  return planBook(request, markets, held);
}

function nothingNamed(channel: Channel): string {
  return thresholdChannel(channel)
    ? 'nothing to update: name the new "interval" or "threshold"'
    : 'nothing to update: name the new "interval"';
}

function notHeld(channel: string, markets: readonly string[]): string {
  return markets.map((market) => `${channel} ${market} is not held on this connection`).join('; ');
}

function planBook(
  request: UpdateRequest,
  markets: string[],
  held: ReadonlyMap<string, AnyStream>,
): UpdatePlan | Refused {
  const { depth, interval } = request;
  const books = new Map<string, AnyStream[]>();
  for (const stream of held.values()) {
    if (stream.channel !== 'book') continue;
    books.set(stream.market, [...(books.get(stream.market) ?? []), stream]);
  }
  const join: string[] = [];
  const leave: AnyStream[] = [];
  const keys: string[] = [];
  const problems: string[] = [];
  for (const market of markets) {
    const depths = books.get(market) ?? [];
    const named = request.from_depth;
    const candidates = named === undefined ? depths : depths.filter((stream) => stream.depth === named);
    const [from] = candidates;
    if (from === undefined) {
      problems.push(
        named === undefined
          ? `book ${market} is not held on this connection`
          : `book ${market} at depth ${depthName(named)} is not held on this connection`,
      );
    } else if (candidates.length > 1) {
      problems.push(`book ${market} is held at several depths: name the one to move in "from_depth"`);
    } else {
      const to = depth === undefined ? from.depth : depth;
      keys.push(streamKey('book', market, to));
      if (from.depth === to) continue;
      leave.push(from);
      if (!held.has(streamKey('book', market, to))) join.push(market);
    }
  }
  if (problems.length > 0) return { ok: false, code: 'bad_request', message: problems.join('; ') };
  return { ok: true, channel: 'book', depth, markets, join, leave, interval, threshold: undefined, keys };
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
}

export function heldView(
  held: ReadonlyMap<string, AnyStream>,
  lastSent: ReadonlyMap<string, StreamPosition>,
  subscriber: StreamSubscriber,
): HeldView {
  return {
    held,
    lastSent,
    intervalOf: (stream) => stream.subscribers.intervalOf(subscriber),
    thresholdOf: (stream) => stream.subscribers.thresholdOf(subscriber),
    optionsOf: (stream) => optionsInForce(stream, subscriber),
  };
}

function listEntries(view: HeldView, wildcards: readonly string[]): SubscriptionEntry[] {
  const entries: SubscriptionEntry[] = [];
  for (const stream of view.held.values()) {
    const sent = view.lastSent.get(stream.key);
    entries.push({
      channel: stream.channel,
      market: stream.market,
      epoch: sent?.epoch ?? null,
      seq: sent?.seq ?? null,
      ...view.optionsOf(stream),
      status: stream.freshness,
    });
  }
  for (const channel of wildcards) {
    if (!isChannel(channel)) continue;
    entries.push({ channel, market: '*', epoch: null, seq: null, wildcard: true });
  }
  return entries;
}
