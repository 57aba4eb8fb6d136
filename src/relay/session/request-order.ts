/**
 * @module relay/session/request-order
 * A connection's requests are answered in the order they arrived. Nearly all are handled at once;
 * a cluster-mode `subscribe` that resumes from another relay's position waits for the cluster's
 * history (relay/coordination/redis/resume.ts), and the requests behind it wait with it.
 */
export class RequestOrder {
  #pending: Promise<void> | undefined;

  /** Runs `task` now, or after the requests still waiting. */
  run(task: () => void): void {
    if (this.#pending === undefined) task();
    else this.#chain(task);
  }

  /** The requests after this one wait until `work` has settled. */
  hold(work: Promise<void>): void {
    this.#chain(() => work);
  }

  #chain(next: () => void | Promise<void>): void {
    const pending: Promise<void> = (this.#pending ?? Promise.resolve())
      .then(next)
      .catch(() => {
        // Each task answers its own failures; the order must survive them.
      })
      .then(() => {
        if (this.#pending === pending) this.#pending = undefined;
      });
    this.#pending = pending;
  }
}
