/**
 * @module upstream/abort
 * One AbortSignal that fires when any of several others does (the caller's, the client's shutdown,
 * a per-attempt timeout), with its listeners removed afterwards. Written out instead of
 * `AbortSignal.any` so that the client's long-lived shutdown signal does not collect a listener per
 * request.
 */

export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Detaches from the parents and clears the timeout; call once the guarded work is over. */
  dispose(): void;
}

export function linkSignals(parents: readonly (AbortSignal | undefined)[], timeoutMs?: number): LinkedSignal {
  const controller = new AbortController();
  const detachers: (() => void)[] = [];
  for (const parent of parents) {
    if (parent === undefined) continue;
    if (parent.aborted) {
      controller.abort(parent.reason);
      break;
    }
    const onAbort = (): void => controller.abort(parent.reason);
    parent.addEventListener('abort', onAbort, { once: true });
    detachers.push(() => parent.removeEventListener('abort', onAbort));
  }
  const timer =
    timeoutMs === undefined || controller.signal.aborted
      ? undefined
      : setTimeout(() => controller.abort(new DOMException('attempt timed out', 'TimeoutError')), timeoutMs);
  return {
    signal: controller.signal,
    dispose() {
      if (timer !== undefined) clearTimeout(timer);
      for (const detach of detachers) detach();
    },
  };
}

/**
 * Settles like `work`, or rejects with the signal's reason as soon as it aborts (for work that is
 * still waiting in a queue and cannot see the signal yet).
 */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    // Subscribed even when already aborted, so a later rejection of `work` is never unhandled.
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
