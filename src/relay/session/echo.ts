/**
 * @module relay/session/echo
 * What an answer echoes of its request: the `id`, and the selection of a `subscribed` /
 * `unsubscribed`; and the one place a `subscribed` (to `subscribe` and to `update`) takes the
 * options in force on each stream it names from, so that it names every one of them.
 */
import type {
  BookDepth,
  Channel,
  RequestId,
  SubscribedMessage,
  SubscriptionOptions,
} from '../../../packages/protocol/src/protocol/messages.ts';
import { hasDepths } from '../channels/relay-registry.ts';
import type { AnyStream, StreamSubscriber } from '../streams/stream.ts';

/** What a `subscribed` / `unsubscribed` answer echoes of its request. */
export function echoedSelection(
  request: { id?: RequestId | undefined },
  channel: Channel,
  markets: string[],
  depth: BookDepth | undefined,
): { id?: RequestId; channel: Channel; markets: string[]; depth?: BookDepth } {
  return { ...withId(request.id), channel, markets, ...(depth === undefined ? {} : { depth }) };
}

export function withId(id: RequestId | undefined): { id?: RequestId } {
  return id === undefined ? {} : { id };
}

type OptionName = keyof SubscriptionOptions;
/** Every option of `SubscriptionOptions`, none left out, undefined where it is not in force. */
type OptionsRead = { [Name in OptionName]: SubscriptionOptions[Name] | undefined };

/**
 * The options `holder` holds `stream` with now, each read where it is kept (docs/protocol.md
 * "Per-subscription options"). A new option of `SubscriptionOptions` is one line here (the type
 * asks for it), and every `subscribed` and `list` names it.
 */
export function optionsInForce(stream: AnyStream, holder: StreamSubscriber): SubscriptionOptions {
  const read: OptionsRead = {
    depth: hasDepths(stream.channel) ? (stream.depth ?? null) : undefined,
    group: hasDepths(stream.channel) ? stream.group : undefined,
    interval: stream.subscribers.intervalOf(holder),
    threshold: stream.subscribers.thresholdOf(holder),
  };
  return definedOnly(read);
}

/**
 * The options part of a `subscribed` naming these markets, from each market's options in force:
 * all of them when every market holds the same; else those all share, and `options` per market.
 */
export function optionFields(
  byMarket: ReadonlyMap<string, SubscriptionOptions>,
): SubscriptionOptions & Pick<SubscribedMessage, 'options'> {
  const [first, ...others] = [...byMarket.values()];
  if (first === undefined) return {};
  const shared = definedOnly(
    Object.fromEntries(
      Object.entries(first).filter(([name, value]) =>
        others.every((options) => Object.entries(options).some(([n, v]) => n === name && v === value)),
      ),
    ),
  );
  // Each market's options include the shared ones: as many means the same.
  const count = Object.keys(shared).length;
  const alike = [first, ...others].every((options) => Object.keys(options).length === count);
  return alike ? shared : { ...shared, options: Object.fromEntries(byMarket) };
}

/** The options of `read` that are in force (an option's value is never undefined on the wire). */
function definedOnly(read: Readonly<Record<string, unknown>>): SubscriptionOptions {
  return Object.fromEntries(
    Object.entries(read).filter(([, value]) => value !== undefined),
  ) as SubscriptionOptions;
}

/**
 * The `subscribed` answer of a `subscribe` that joined `joined`: the options in force on the
 * streams it joined (a subscribe refused for every market: the options it asked for), `since` if
 * asked, `recovered` when it resumed (every stream named when `resumesAll`: an SSE reconnect), and
 * on a compact connection each stream's number.
 */
export function subscribedMessage(
  request: SubscribeEcho,
  selection: {
    channel: Channel;
    markets: readonly string[];
    depth: BookDepth | undefined;
    group?: string | undefined;
    interval?: number | null;
    threshold?: string | null;
  },
  joined: readonly { market: string; stream: AnyStream }[],
  holder: StreamSubscriber,
  recovered: Readonly<Record<string, boolean>>,
  compact: boolean,
): SubscribedMessage {
  const { channel, markets } = selection;
  const options =
    joined.length > 0
      ? optionFields(new Map(joined.map(({ market, stream }) => [market, optionsInForce(stream, holder)])))
      : askedOptions(selection);
  return {
    type: 'subscribed',
    ...withId(request.id),
    channel,
    markets: [...markets],
    ...options,
    ...(request.since === undefined ? {} : { since: request.since }),
    ...(request.resume === undefined
      ? {}
      : {
          recovered:
            request.resumesAll === true
              ? { ...Object.fromEntries(markets.map((m) => [m, false])), ...recovered }
              : recovered,
        }),
    ...(compact
      ? { streams: Object.fromEntries(joined.map(({ market, stream }) => [market, stream.number])) }
      : {}),
  };
}

/** The options a `subscribe` asked for, for an answer with no stream joined to read them from. */
function askedOptions(selection: {
  depth: BookDepth | undefined;
  group?: string | undefined;
  interval?: number | null;
  threshold?: string | null;
}): SubscriptionOptions {
  const { depth, group, interval, threshold } = selection;
  return {
    ...(depth === undefined ? {} : { depth }),
    ...(group === undefined ? {} : { group }),
    ...(interval == null ? {} : { interval }),
    ...(threshold == null ? {} : { threshold }),
  };
}

/** What `subscribed` echoes of a `subscribe` beyond its selection. */
interface SubscribeEcho {
  id?: RequestId | undefined;
  since?: string | undefined;
  resume?: unknown;
  resumesAll?: boolean | undefined;
}
