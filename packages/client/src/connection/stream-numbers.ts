/**
 * @module client/connection/stream-numbers
 * The stream numbers of one compact connection (protocol.md "Compact encoding"): the relay names each
 * stream in its `subscribed` ack (`streams`: market -> number) before any data message of that
 * stream, and compact data messages carry only the number. Numbers belong to the relay process the
 * socket reached, so the map starts empty on every connection. A stream subscribed again on the
 * same connection may get a new number (the relay made a new stream); the old one is forgotten so
 * that the map holds one number per stream however long the connection lives.
 */

import { hasDepths } from '../../../protocol/src/channels/registry.ts';
import { streamKey } from '../../../protocol/src/channels/stream-key.ts';
import type { CompactStreamIdentity, CompactStreamLookup } from '../../../protocol/src/protocol/compact.ts';
import type { BookDepth, Channel } from '../../../protocol/src/protocol/messages.ts';

/** What the map reads from a `subscribed` message. */
export interface StreamAnnouncement {
  channel: Channel;
  depth?: BookDepth;
  group?: string;
  streams?: Record<string, number>;
}

export class StreamNumbers implements CompactStreamLookup {
  readonly #byNumber = new Map<number, CompactStreamIdentity>();
  /** Stream key -> its current number, to forget a replaced one. */
  readonly #byStream = new Map<string, number>();

  get(stream: number): CompactStreamIdentity | undefined {
    return this.#byNumber.get(stream);
  }

  /** Learns the numbers a `subscribed` announces (none on a JSON connection). */
  learn(message: StreamAnnouncement): void {
    if (message.streams === undefined) return;
    const depth = hasDepths(message.channel) ? (message.depth ?? null) : undefined;
    for (const [market, stream] of Object.entries(message.streams)) {
      const key = streamKey(message.channel, market, depth, message.group);
      const previous = this.#byStream.get(key);
      if (previous !== undefined && previous !== stream) this.#byNumber.delete(previous);
      this.#byStream.set(key, stream);
      this.#byNumber.set(stream, {
        channel: message.channel,
        market,
        ...(depth === undefined ? {} : { depth }),
        ...(message.group === undefined ? {} : { group: message.group }),
      });
    }
  }

  clear(): void {
    this.#byNumber.clear();
    this.#byStream.clear();
  }
}
