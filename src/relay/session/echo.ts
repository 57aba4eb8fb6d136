/**
 * @module relay/session/echo
 * What an answer echoes of its request: the `id`, and the selection of a `subscribed` /
 * `unsubscribed`.
 */
import type { BookDepth, Channel, RequestId } from '../../../packages/protocol/src/protocol/messages.ts';

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
