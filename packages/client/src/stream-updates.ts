/**
 * @module client/stream-updates
 * A held stream's options changed in place with an `update` (docs/protocol.md "`update`"): a book
 * moved to another depth, a stream's `interval` or `threshold` set or cleared. The stream takes
 * the change as the relay's `subscribed` answer arrives; a refusal rejects and leaves it as it was.
 */
import type { BookDepth, UpdateRequest } from '../../protocol/src/protocol/messages.ts';
import type { StreamRef } from './connection/frames.ts';
import { RelayClientError } from './events/client-error.ts';
import { type RequestsInFlight, refusal } from './requests-in-flight.ts';
import type { StreamOptions } from './subscriptions/stream-subscription.ts';
import type { SubscriptionRegistry } from './subscriptions/subscriptions.ts';

export interface StreamUpdatesWiring {
  streams: SubscriptionRegistry;
  inFlight: RequestsInFlight;
  send(text: string): boolean;
  /** Throws where the transport carries no requests (SSE). */
  needsRequests(call: string, instead: string): void;
}

export class StreamUpdates {
  readonly #o: StreamUpdatesWiring;

  constructor(wiring: StreamUpdatesWiring) {
    this.#o = wiring;
  }

  /** The stream is re-registered under its new depth as the answer arrives, before its snapshot. */
  changeDepth(ref: StreamRef, depth: BookDepth, moved: () => void): Promise<void> {
    this.#o.needsRequests('book.update()', 'subscribe at the new depth, then unsubscribe the old one');
    const streams = this.#o.streams;
    const stream = streams.get(ref.channel, ref.market, ref.depth, ref.group);
    if (stream === undefined)
      return Promise.reject(
        new RelayClientError('bad_request', `${ref.channel} ${ref.market} is not subscribed`),
      );
    if (depth !== ref.depth && streams.get(ref.channel, ref.market, depth, ref.group) !== undefined)
      return Promise.reject(
        new RelayClientError(
          'bad_request',
          `${ref.channel} ${ref.market} is already subscribed at depth ${depth ?? 'full'}`,
        ),
      );
    const body = {
      op: 'update' as const,
      channel: ref.channel,
      markets: [ref.market],
      depth,
      from_depth: ref.depth,
      from_group: ref.group ?? null,
    };
    return this.#ask(body, () => {
      streams.delete(stream);
      moved();
      if (!stream.isClosed) streams.add(stream);
    });
  }

  /** An `update` of one stream's options; the stream takes them once the relay answers. */
  changeOptions(ref: StreamRef, options: StreamOptions): Promise<void> {
    this.#o.needsRequests('update()', 'subscribe again with the new options, answered by a fresh snapshot');
    const stream = this.#o.streams.get(ref.channel, ref.market, ref.depth, ref.group);
    if (stream === undefined)
      return Promise.reject(
        new RelayClientError('bad_request', `${ref.channel} ${ref.market} is not subscribed`),
      );
    const body = {
      op: 'update' as const,
      channel: ref.channel,
      markets: [ref.market],
      ...options,
    };
    return this.#ask(body, () => {
      if (options.interval !== undefined) stream.interval = options.interval ?? undefined;
      if (options.threshold !== undefined) stream.threshold = options.threshold ?? undefined;
    });
  }

  /** Sends an `update`; `accepted` applies it when the relay answers `subscribed`, else it rejects. */
  #ask(body: Omit<UpdateRequest, 'id'>, accepted: () => void): Promise<void> {
    return new Promise((resolve, reject) =>
      this.#o.inFlight.ask(body, this.#o.send, (answer) => {
        if (answer?.type !== 'subscribed') {
          reject(refusal(answer));
          return;
        }
        accepted();
        resolve();
      }),
    );
  }
}
