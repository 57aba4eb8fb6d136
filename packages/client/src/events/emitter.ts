/**
 * @module client/events/emitter
 * A tiny typed event emitter for the client SDK: the browser build may not import Node's `events`.
 * A listener that throws never breaks the SDK's own state handling: the error goes to `onListenerError`.
 */
export type Listener<T> = (payload: T) => void;

export class Emitter<Events extends object> {
  readonly #listeners = new Map<keyof Events, Set<Listener<never>>>();
  /** Adds a listener; returns a function that removes it. */
  on<K extends keyof Events>(event: K, listener: Listener<Events[K]>): () => void {
    let set = this.#listeners.get(event);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(event, set);
    }
    set.add(listener);
    return () => this.off(event, listener);
  }

  once<K extends keyof Events>(event: K, listener: Listener<Events[K]>): () => void {
    const off = this.on(event, (payload) => {
      off();
      listener(payload);
    });
    return off;
  }

  off<K extends keyof Events>(event: K, listener: Listener<Events[K]>): void {
    this.#listeners.get(event)?.delete(listener);
  }

  listenerCount(event: keyof Events): number {
    return this.#listeners.get(event)?.size ?? 0;
  }

  protected emit<K extends keyof Events>(event: K, payload: Events[K]): void {
    const set = this.#listeners.get(event) as Set<Listener<Events[K]>> | undefined;
    if (set === undefined) return;
    for (const listener of [...set]) {
      try {
        listener(payload);
      } catch (error) {
        this.onListenerError(error, event);
      }
    }
  }

  /** Where a throwing listener's error goes; by default the host's uncaught-error path. */
  protected onListenerError(error: unknown, _event: keyof Events): void {
    rethrowLater(error);
  }
}

/** The host's uncaught-error path, outside the SDK's call stack (as DOM event listeners do). */
export function rethrowLater(error: unknown): void {
  setTimeout(() => {
    throw error;
  }, 0);
}
