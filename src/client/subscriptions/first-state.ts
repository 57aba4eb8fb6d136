/**
 * @module client/subscriptions/first-state
 * Waits for a subscription's first state (at once when it has one): what a one-off question such
 * as `client.markets()` answers from. Rejects with the stream's error when it ends before.
 */
import type { RelayClientError } from '../events/client-error.ts';

interface StatefulStream<State> extends AsyncIterable<State> {
  readonly channel: string;
  on(event: 'error', listener: (error: RelayClientError) => void): () => void;
}

export async function firstState<State>(stream: StatefulStream<State>): Promise<State> {
  let failure: RelayClientError | undefined;
  const stopListening = stream.on('error', (error) => {
    failure = error;
  });
  try {
    for await (const state of stream) return state;
  } finally {
    stopListening();
  }
  throw failure ?? new Error(`the ${stream.channel} stream ended before its first state`);
}
