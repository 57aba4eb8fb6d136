/**
 * @module client/requests-in-flight
 * The client's requests the relay has not answered yet, by id. The relay answers requests in
 * order, so an error without id (a frame it could not read) answers the oldest. A question (`list`,
 * `update`) is also told its answer, or that none will come, and `refusal` says why it was not
 * answered as asked.
 */
import { onTheWire } from '../../protocol/src/protocol/channels.ts';
import type {
  ErrorMessage,
  ListRequest,
  RequestId,
  SubscribedMessage,
  SubscriptionsMessage,
  UpdateRequest,
} from '../../protocol/src/protocol/messages.ts';
import { RelayClientError } from './events/client-error.ts';
import type { SubscribeBody, UnsubscribeBody } from './subscriptions/subscriptions.ts';

type RequestBody = SubscribeBody | UnsubscribeBody | Omit<UpdateRequest, 'id'> | Omit<ListRequest, 'id'>;
/** What answers a question. */
export type Answer = SubscribedMessage | SubscriptionsMessage | ErrorMessage;
/** Told the answer, or undefined when none will come (not sent, or the connection closed). */
type Settle = (answer: Answer | undefined) => void;

export class RequestsInFlight {
  #pending: { id: RequestId; body: RequestBody }[] = [];
  #nextId = 1;
  readonly #waiting = new Map<RequestId, Settle>();

  /** Sends `body` with the next id; it waits for its answer only if `send` could send it. */
  send(body: RequestBody, send: (text: string) => boolean): void {
    const id = this.#nextId++;
    // A `rest` request names its streams `paths` (protocol.md "`rest` data").
    if (send(JSON.stringify(onTheWire({ ...body, id })))) this.#pending.push({ id, body });
  }

  /** Sends a question; `settle` is called as its answer is dispatched, before any later message. */
  ask(body: RequestBody, send: (text: string) => boolean, settle: Settle): void {
    const id = this.#nextId;
    this.send(body, send);
    if (this.#pending.at(-1)?.id === id) this.#waiting.set(id, settle);
    else settle(undefined);
  }

  /** An answer carrying an id, to the question waiting for it. */
  reply(answer: Answer): void {
    if (answer.id === undefined) return;
    const settle = this.#waiting.get(answer.id);
    this.#waiting.delete(answer.id);
    settle?.(answer);
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
    const waiting = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const settle of waiting) settle(undefined);
  }
}

/** Why a question was not answered as asked: the relay's error, or no answer at all. */
export function refusal(answer: Answer | undefined): RelayClientError {
  if (answer?.type === 'error')
    return new RelayClientError(answer.code, answer.message, {
      ...(answer.id === undefined ? {} : { requestId: answer.id }),
    });
  return new RelayClientError('connection_failed', 'the connection closed or was not open: no answer');
}
