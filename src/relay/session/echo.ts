/**
 * @module relay/session/echo
 * What an answer echoes of its request: the `id`, and the selection of a `subscribed` /
 * `unsubscribed` (with the `interval` a subscription is paced at and the `threshold` it waits for).
 */
import type { BookDepth, Channel, RequestId } from '../../../packages/protocol/src/protocol/messages.ts';

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
