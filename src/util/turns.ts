/**
 * @module util/turns
 * Work over many items spread over event-loop turns. A round that tells every subscriber something
 * (a `confirmed`, a stream gone stale: relay/streams/publisher.ts) is thousands of messages at once
 * on a busy relay, which held the loop for tens of milliseconds: every other client's update waited
 * behind it. Each turn does about a fixed amount of the work, then lets the loop go on. (The
 * heartbeat round, ws/client-connection.ts, does the same by hand.)
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Calls `each` for every item in order, letting the event loop go on whenever the items of this turn
 * cost `perTurn` or more; `each` returns what its item cost (messages sent, subscribers told; 0 for
 * one skipped). The first turn's share runs before this returns. An item added to a live collection
 * while the round waits is visited as its iterator would visit it: pass a copy to keep the round
 * to the items held at its start.
 */
export async function inTurns<T>(
  items: Iterable<T>,
  perTurn: number,
  each: (item: T) => number,
): Promise<void> {
  let spent = 0;
  for (const item of items) {
    if (spent >= perTurn) {
      await nextTurn();
      spent = 0;
    }
    spent += each(item);
  }
}
