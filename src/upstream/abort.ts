/**
 * @module upstream/abort
 * One AbortSignal that fires when any of several others does (the caller's, the client's shutdown),
 * with its listeners removed afterwards. Written out instead of `AbortSignal.any` so that the
 * client's long-lived shutdown signal does not collect a listener per request.
 */

export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Detaches from the parents; call once the guarded work is over. */
  dispose(): void;
}

export function linkSignals(parents: readonly (AbortSignal | undefined)[]): LinkedSignal {
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
  return {
    signal: controller.signal,
    dispose() {
      for (const detach of detachers) detach();
    },
  };
}
