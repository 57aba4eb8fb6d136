/**
 * @module relay/session/echo
 * What an answer echoes of its request: the `id`, and the selection of a `subscribed` /
 * `unsubscribed` (with the `interval` a subscription is paced at and the `threshold` it waits for);
 * the whole `subscribed` of a `subscribe`.
 */
import type {
  BookDepth,
  Channel,
  RequestId,
  SubscribedMessage,
} from '../../../packages/protocol/src/protocol/messages.ts';
import { groupOf } from '../streams/stream-messages.ts';

/** What a `subscribed` / `unsubscribed` answer echoes of its request. */
export function echoedSelection(
  request: { id?: RequestId | undefined },
  channel: Channel,
  markets: string[],
  depth: BookDepth | undefined,
  interval?: number | null,
  threshold?: string | null,
): {
  id?: RequestId;
  channel: Channel;
  markets: string[];
  depth?: BookDepth;
  interval?: number;
  threshold?: string;
} {
  return {
    ...withId(request.id),
    channel,
    markets,
    ...(depth === undefined ? {} : { depth }),
    ...(interval == null ? {} : { interval }),
    ...(threshold == null ? {} : { threshold }),
  };
}

export function withId(id: RequestId | undefined): { id?: RequestId } {
  return id === undefined ? {} : { id };
}

/**
 * The `subscribed` answer of a `subscribe` that joined `joined`: its selection echoed, `since` if
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
  joined: readonly { market: string; stream: { readonly number: number } }[],
  recovered: Readonly<Record<string, boolean>>,
  compact: boolean,
): SubscribedMessage {
  const { channel, markets, depth } = selection;
  return {
    type: 'subscribed',
    ...echoedSelection(request, channel, [...markets], depth, selection.interval, selection.threshold),
    ...groupOf(selection),
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

/** What `subscribed` echoes of a `subscribe` beyond its selection. */
interface SubscribeEcho {
  id?: RequestId | undefined;
  since?: string | undefined;
  resume?: unknown;
  resumesAll?: boolean | undefined;
}
