/**
 * @module relay/session/request-order
 * A connection's requests are answered in the order they arrived. Nearly all are handled at once;
 * a `subscribe` whose resume the broker's history must be read for (a position from another relay
 * in cluster mode) waits for it, and the requests behind it wait with it.
 */
export class RequestOrder {
  #pending: Promise<void> | undefined;

  /** Runs `task` now, or after the requests still waiting. */
  run(task: () => void): void {
    if (this.#pending === undefined) task();
    else this.#chain(task);
  }

  /**
   * Runs `task` with `value` now when it is there, else once it resolves (with `onFailure` if it
   * rejects), the requests after this one waiting until then.
   */
  once<T>(value: T | Promise<T>, task: (value: T) => void, onFailure: T): void {
    if (value instanceof Promise)
      this.hold(
        value.then(
          (resolved) => task(resolved),
          () => task(onFailure),
        ),
      );
    else task(value);
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
