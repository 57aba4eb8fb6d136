/**
 * @module client/subscriptions/first-state
 * Waits for a subscription's first state (at once when it has one): what a one-off question such
 * as `client.markets()` answers from. Rejects with the stream's error when it ends before, or
 * with the client's reason when it gives up waiting.
 */
import type { RelayClientError } from '../events/client-error.ts';

interface StatefulStream<State> extends AsyncIterable<State> {
  readonly channel: string;
  on(event: 'error', listener: (error: RelayClientError) => void): () => void;
}

/** `giveUp`: aborted, the wait rejects with its reason (at once if aborted already). */
export async function firstState<State>(stream: StatefulStream<State>, giveUp?: AbortSignal): Promise<State> {
  giveUp?.throwIfAborted();
  let failure: RelayClientError | undefined;
  const stopListening = stream.on('error', (error) => {
    failure = error;
  });
  const states = stream[Symbol.asyncIterator]();
  let stopWaiting = () => {};
  const abandoned = new Promise<never>((_resolve, reject) => {
    const onAbort = () => reject(giveUp?.reason);
    giveUp?.addEventListener('abort', onAbort, { once: true });
    stopWaiting = () => giveUp?.removeEventListener('abort', onAbort);
  });
  try {
    const first = await Promise.race([states.next(), abandoned]);
    if (first.done !== true) return first.value;
  } finally {
    stopWaiting();
    stopListening();
    // Not awaited: a generator waiting for its next state finishes only when one comes.
    void states.return?.();
  }
  throw failure ?? new Error(`the ${stream.channel} stream ended before its first state`);
}
