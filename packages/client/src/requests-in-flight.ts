/**
 * @module client/requests-in-flight
 * The client's subscribe and unsubscribe requests the relay has not answered yet, by id. The relay
 * answers requests in order, so an error without id (a frame it could not read) answers the oldest.
 */
import { onTheWire } from '../../protocol/src/protocol/channels.ts';
import type { RequestId } from '../../protocol/src/protocol/messages.ts';
import type { SubscribeBody, UnsubscribeBody } from './subscriptions/subscriptions.ts';

type RequestBody = SubscribeBody | UnsubscribeBody;

export class RequestsInFlight {
  #pending: { id: RequestId; body: RequestBody }[] = [];
  #nextId = 1;

  /** Sends `body` with the next id; it waits for its answer only if `send` could send it. */
  send(body: RequestBody, send: (text: string) => boolean): void {
    const id = this.#nextId++;
    // A `rest` request names its streams `paths` (protocol.md "`rest` data").
    if (send(JSON.stringify(onTheWire({ ...body, id })))) this.#pending.push({ id, body });
  }

  /**
   * Removes the request a reply answers: by id, or for an error without id (a frame the relay could
   * not read) the oldest one, since the relay answers each request in order.
   */
  answered(id: RequestId | undefined): RequestBody | undefined {
    const index = id === undefined ? 0 : this.#pending.findIndex((pending) => pending.id === id);
    if (index < 0 || index >= this.#pending.length) return undefined;
    return this.#pending.splice(index, 1)[0]!.body;
  }

  /** The connection closed or opened anew: nothing sent before will be answered. */
  clear(): void {
    this.#pending = [];
  }
}
