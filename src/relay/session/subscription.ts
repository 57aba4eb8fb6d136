/**
 * @module relay/session/subscription
 * The steps of a session's `subscribe` (relay/session/session.ts), for any transport: check the
 * selection against the limits, leave out the markets market admission refused
 * (relay/admission/market.ts), join the registry's streams, and work out per stream whether the
 * client's resume point can be replayed (docs/protocol.md "Resume"). Then, once `subscribed` is
 * written, the first messages of each stream: the replay, or a fresh snapshot.
 */

import { checkSinceTime, type SinceSpec } from '../../../packages/protocol/src/channels/history.ts';
import { channelDefinitions, isDefinedChannel } from '../../../packages/protocol/src/channels/registry.ts';
import { streamKey } from '../../../packages/protocol/src/channels/stream-key.ts';
import { isChannel } from '../../../packages/protocol/src/protocol/channels.ts';
import type {
  BookDepth,
  Channel,
  ErrorCode,
  ResumePoint,
  ServerMessage,
  SubscribeRequest,
} from '../../../packages/protocol/src/protocol/messages.ts';
import type { Refusal } from '../admission/market.ts';
import { hasDepths, hasThreshold } from '../channels/relay-registry.ts';
import type { Frame } from '../streams/frame.ts';
import { type HistoryReplay, NOTHING_FETCHED, type StreamRegistry } from '../streams/registry.ts';
import type { AnyStream, StreamSubscriber } from '../streams/stream.ts';

/** A `subscribe` as its selection is checked: the request without its `op` and `id`. */
export type SelectionRequest = Omit<SubscribeRequest, 'op' | 'id'>;

export interface StreamSelection {
  channel: Channel;
  /** Without duplicates. */
  markets: readonly string[];
  /** `book` only. */
  depth: BookDepth | undefined;
  /** A grouped `book` only: the group step (docs/protocol.md "Grouped books"). */
  group?: string | undefined;
  /**
   * The pace asked for in ms (docs/protocol.md "Per-subscription options"), null: every change;
   * undefined (a wildcard's joins) leaves a held stream's pace as it is.
   */
  interval?: number | null;
  /** The `price` threshold asked for, null: none; undefined (a wildcard's joins): as it is. */
  threshold?: string | null;
  /** Of a channel that serves history: the history asked for (docs/protocol.md "History since a time"). */
  since?: SinceSpec;
}

/** A request's selection checked, or the error it is answered with (naming its channel). */
export type SelectionCheck =
  | {
      ok: true;
      selection: StreamSelection;
      /** The selection's markets not held yet. */
      added: string[];
    }
  | {
      ok: false;
      code: Extract<ErrorCode, 'unknown_channel' | 'bad_request' | 'limit_exceeded'>;
      message: string;
    };

/**
 * What a `subscribe` asks for, once its shape has passed the request schema: a known channel,
 * `depth` only on `book`, and no more than `maxStreams` streams together with those `held` already
 * (by stream key).
 */
export function checkSelection(
  request: SelectionRequest,
  maxStreams: number,
  held: ReadonlyMap<string, unknown> = new Map(),
  /** The record's retention (ms), when the relay records: how far back `since` may read it. */
  recordAgeMs?: number,
  now = Date.now(),
): SelectionCheck {
  const { channel } = request;
  if (!isChannel(channel))
    return { ok: false, code: 'unknown_channel', message: `unknown channel "${channel}"` };
  if (!hasDepths(channel) && request.depth !== undefined)
    return { ok: false, code: 'bad_request', message: '`depth` applies to the book channel only' };
  if (!hasDepths(channel) && request.group !== undefined)
    return { ok: false, code: 'bad_request', message: groupRefused };
  if (request.interval !== undefined && !pacedChannel(channel))
    return { ok: false, code: 'bad_request', message: intervalRefused(channel) };
  if (request.threshold !== undefined && !hasThreshold(channel))
    return { ok: false, code: 'bad_request', message: thresholdRefused(channel) };
  const since = checkSinceOption(request, now, recordAgeMs);
  if (!since.ok) return { ok: false, code: 'bad_request', message: since.message };
  const depth: BookDepth | undefined = hasDepths(channel) ? (request.depth ?? null) : undefined;
  // In their one spelling, each once.
  const markets = [...new Set(request.markets)];
  const { group } = request;
  const added = markets.filter((market) => !held.has(streamKey(channel, market, depth, group)));
  if (held.size + added.length > maxStreams)
    return { ok: false, code: 'limit_exceeded', message: `at most ${maxStreams} streams per connection` };
  const options = { interval: request.interval ?? null, threshold: request.threshold ?? null };
  const selection = { channel, markets, depth, ...(group === undefined ? {} : { group }), ...options };
  return {
    ok: true,
    selection: since.since === undefined ? selection : { ...selection, since: since.since },
    added,
  };
}

/** The channels that read upstream's history for `since` (their definition's `history`). */
const upstreamHistoryChannels = Object.entries(channelDefinitions)
  .filter(([, definition]) => definition.history !== undefined)
  .map(([channel]) => channel);

/**
 * `since`, never beside `resume`, within its bounds at `now`: what a channel that reads upstream's
 * history takes by its definition's check, and, when the relay records, a time within the record's
 * retention (`recordAgeMs`) on any channel.
 */
function checkSinceOption(
  request: SelectionRequest,
  now: number,
  recordAgeMs: number | undefined,
): { ok: true; since?: SinceSpec } | { ok: false; message: string } {
  if (request.since === undefined) return { ok: true };
  if (request.resume !== undefined)
    return {
      ok: false,
      message: '"since" and "resume" exclude each other: resume continues a stream, since starts one',
    };
  const history = isDefinedChannel(request.channel) ? channelDefinitions[request.channel].history : undefined;
  const upstream = history?.check(request.since, now, request.markets);
  if (upstream?.ok) return upstream;
  if (recordAgeMs === undefined)
    return (
      upstream ?? {
        ok: false,
        message: `"since" on ${request.channel} is read from the relay's record, and this relay records nothing (history off); without it "since" applies to ${upstreamHistoryChannels.join(', ')} only`,
      }
    );
  // A time the record answers (further back than upstream's bound, or of a candle source upstream
  // keeps no history of) is taken too; a value neither takes is refused with upstream's reason.
  const recorded = checkSinceTime(request.since, now, recordAgeMs);
  return recorded.ok || upstream === undefined ? recorded : upstream;
}

/**
 * Whether `interval` means something on `channel`: on a stream whose messages are states, not on
 * one whose channel declares its messages events (conflating would drop them).
 */
export function pacedChannel(channel: Channel): boolean {
  return !isDefinedChannel(channel) || channelDefinitions[channel].events !== true;
}

export const groupRefused = '"group" applies to the book channel only';

export function intervalRefused(channel: string): string {
  return `"interval" does not apply to the ${channel} channel: each message is an event, none may be conflated away`;
}

export function thresholdRefused(channel: string): string {
  return `"threshold" applies to the price channel only (moves of best_bid, best_ask, midpoint_price), not ${channel}`;
}

export interface JoinedStream {
  market: string;
  stream: AnyStream;
  /** The updates the client missed, or undefined when it gets a snapshot. */
  replay: Frame[] | undefined;
}

export interface JoinResult {
  joined: JoinedStream[];
  /** Per market given a resume point: whether its updates are replayed. */
  recovered: Record<string, boolean>;
}

/**
 * The broker's history for the resume points this relay's own rings cannot serve (the client comes
 * from another relay, or from before this one started): at once when there is nothing to wait for.
 */
export function fetchReplay(
  registry: StreamRegistry,
  selection: StreamSelection,
  resume: Readonly<Record<string, ResumePoint>> | undefined,
): HistoryReplay | Promise<HistoryReplay> {
  const { channel, depth, group } = selection;
  // A grouped book is numbered by each relay (relay/channels/book/book-target.ts): only its rings hold it.
  if (group !== undefined) return NOTHING_FETCHED;
  const points: [string, ResumePoint][] = [];
  for (const market of resume === undefined ? [] : selection.markets) {
    const from = resume?.[market];
    if (from === undefined) continue;
    const local = registry.get({ channel, market, depth });
    if (local?.updatesSince(from.epoch, from.seq) === undefined) points.push([market, from]);
  }
  return points.length === 0 ? NOTHING_FETCHED : registry.resumeHistory.fetch(channel, depth, points);
}

export function joinStreams(
  registry: StreamRegistry,
  subscriber: StreamSubscriber,
  selection: StreamSelection,
  resume: Readonly<Record<string, ResumePoint>> | undefined,
  refused: ReadonlyMap<string, Refusal>,
  history: HistoryReplay,
): JoinResult {
  const { channel, depth, group } = selection;
  const joined: JoinedStream[] = [];
  const recovered: Record<string, boolean> = {};
  for (const market of selection.markets) {
    if (refused.has(market)) continue;
    // A wildcard joins every market's stream at once: no spread copy of the identity for each.
    const stream = registry.subscribe(subscriber, { channel, market, depth, group });
    const resumeFrom = resume?.[market];
    const replay =
      resumeFrom === undefined
        ? undefined
        : (stream.updatesSince(resumeFrom.epoch, resumeFrom.seq) ??
          history.replay(stream, subscriber, resumeFrom));
    // After the replay: a history replay sets the subscriber aside and back as a raw one. A repeated
    // subscribe sets the pace and threshold it names (none: every change).
    if (selection.interval !== undefined || selection.threshold !== undefined)
      stream.subscribers.pace(subscriber, selection.interval ?? undefined, selection.threshold ?? undefined);
    if (resumeFrom !== undefined) recovered[market] = replay !== undefined;
    joined.push({ market, stream, replay });
  }
  return { joined, recovered };
}

/** The stream error a refused market is answered with, naming the market. */
export function refusalError(channel: Channel, market: string, refusal: Refusal): ServerMessage {
  return { type: 'error', code: refusal.code, message: refusal.message, channel, market };
}

/**
 * The first messages of each joined stream: the missed updates, or (also for a repeated subscribe,
 * the way to resync one stream) a fresh snapshot once the stream has a state; then `stale` if so.
 */
export function sendFirstMessages(subscriber: StreamSubscriber, joined: readonly JoinedStream[]): void {
  for (const { stream, replay } of joined) {
    if (replay !== undefined) {
      for (const frame of replay) subscriber.deliver(stream, frame, 'update');
    } else if (stream.hasState) {
      subscriber.deliver(stream, stream.snapshotFrame(), 'snapshot');
    }
    if (stream.freshness === 'stale') subscriber.notify(stream, stream.statusFrame());
  }
}
