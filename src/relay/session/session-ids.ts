/**
 * @module relay/session/session-ids
 * The numbers of the relay's sessions: one sequence for every transport, so that a number in the
 * log, the status page or a metric names one connection, WebSocket or SSE.
 */
export class SessionIds {
  #last = 0;

  next(): number {
    this.#last += 1;
    return this.#last;
  }
}
