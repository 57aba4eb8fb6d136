/**
 * @module client/subscriptions/subscribe-batch
 * Streams waiting to be (re)subscribed: new ones and ones that asked for a snapshot. Several
 * streams asking in one turn (a UI opening 50 books, a burst of gaps) cost one request per
 * (channel, depth) group, sent at the end of the turn.
 */
import type { AnyStreamSubscription } from './channel-subscriptions.ts';
import { type SubscribeBody, subscribeRequests } from './subscriptions.ts';

export class SubscribeBatch {
  readonly #streams = new Set<AnyStreamSubscription>();
  readonly #isOpen: () => boolean;
  readonly #send: (request: SubscribeBody) => void;
  #flushQueued = false;

  constructor(isOpen: () => boolean, send: (request: SubscribeBody) => void) {
    this.#isOpen = isOpen;
    this.#send = send;
  }

  add(stream: AnyStreamSubscription): void {
    this.#streams.add(stream);
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    queueMicrotask(() => {
      this.#flushQueued = false;
      if (!this.#isOpen()) return; // the next open resubscribes everything
      const streams = [...this.#streams].filter((candidate) => !candidate.isClosed);
      this.#streams.clear();
      for (const request of subscribeRequests(streams, false)) this.#send(request);
    });
  }

  delete(stream: AnyStreamSubscription): void {
    this.#streams.delete(stream);
  }

  /** Everything is subscribed anew on open: nothing left to send. */
  clear(): void {
    this.#streams.clear();
  }
}
