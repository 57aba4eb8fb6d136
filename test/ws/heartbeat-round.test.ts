/**
 * A heartbeat round over many connections is spread over event-loop turns: a bounded number of
 * connections a turn, every connection held at the round's start served once, none twice.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { HEARTBEATS_PER_TURN, heartbeatAll } from '../../src/ws/client-connection.ts';
import { waitFor } from '../support/wait-for.ts';

class CountedConnection {
  beats = 0;
  heartbeat(): void {
    this.beats += 1;
  }
}

describe('heartbeatAll', () => {
  it('serves at most HEARTBEATS_PER_TURN connections a turn, then every one once', async () => {
    const connections = new Set(
      Array.from({ length: 2 * HEARTBEATS_PER_TURN + 7 }, () => new CountedConnection()),
    );
    const all = [...connections];
    heartbeatAll(connections);
    const served = () => all.filter((connection) => connection.beats > 0).length;
    expect(served()).toBe(HEARTBEATS_PER_TURN); // the first turn's share, at once
    // A connection that arrives during the round is not in it; one that leaves is still served by
    // the round it was in (a closed connection's heartbeat does nothing).
    connections.add(new CountedConnection());
    await nextTurn();
    expect(served()).toBeLessThanOrEqual(2 * HEARTBEATS_PER_TURN);
    await waitFor('the whole round', () => served() === all.length);
    for (let turn = 0; turn < 3; turn += 1) await nextTurn();
    expect(all.every((connection) => connection.beats === 1)).toBe(true);
    expect([...connections].at(-1)?.beats).toBe(0);
  });

  it('serves a round within one turn as a whole at once', () => {
    const connections = Array.from({ length: 3 }, () => new CountedConnection());
    heartbeatAll(connections);
    expect(connections.map((connection) => connection.beats)).toEqual([1, 1, 1]);
  });
});
