/**
 * @module relay/session/echo
 * What an answer echoes of its request: the `id`, and the selection of a `subscribed` /
 * `unsubscribed` (with the `interval` a subscription is paced at).
 */
import type { BookDepth, Channel, RequestId } from '../../../packages/protocol/src/protocol/messages.ts';

/** What a `subscribed` / `unsubscribed` answer echoes of its request. */
export function echoedSelection(
  request: { id?: RequestId | undefined },
  channel: Channel,
  markets: string[],
  depth: BookDepth | undefined,
  interval?: number | null,
): { id?: RequestId; channel: Channel; markets: string[]; depth?: BookDepth; interval?: number } {
  return {
    ...withId(request.id),
    channel,
    markets,
    ...(depth === undefined ? {} : { depth }),
    ...(interval == null ? {} : { interval }),
  };
}

export function withId(id: RequestId | undefined): { id?: RequestId } {
  return id === undefined ? {} : { id };
}
