/**
 * @module test/support/slow-consumer
 * Making a relay hold a connection back, for the slow-consumer tests: a small high-water mark and
 * no request rate limit, and a way to fill a paused connection's socket.
 */

import type { Relay, RelayConfig } from '../../src/relay-server.ts';
import type { SimulatorOptions } from '../../src/sim/server.ts';
import { waitFor } from './wait-for.ts';

/**
 * Harness options: 10 markets, a 64 KiB high-water mark, requests unlimited so a test can flood,
 * compression off.
 */
export function slowConsumerHarness(slowConsumerTimeoutMs = 10_000): {
  sim: SimulatorOptions;
  relay: Partial<RelayConfig>;
} {
  return {
    sim: { markets: 10 },
    relay: {
      // Plain frames: compressed snapshots are a third of the size, so filling the loopback
      // buffers would take three times the flood (and the time) for the same test of backpressure.
      compression: false,
      tuning: {
        connection: {
          highWaterBytes: 64 * 1024,
          slowConsumerTimeoutMs,
          requestsPerSecond: 100_000,
          requestBurst: 100_000,
        },
      },
    },
  };
}

/**
 * Sends repeated subscribes (each answered with a fresh snapshot per market) on a connection that
 * has stopped reading, until the relay holds it back. Loopback's kernel buffers take tens of MB
 * before Node buffers anything, so `burst` frames go out per check (a test that must see no drain
 * before the hold, and so no conflation, sends one at a time).
 */
export async function floodUntilHeldBack(
  relay: Relay,
  send: (frame: string) => void,
  markets: string[],
  burst = 50,
): Promise<void> {
  const frame = JSON.stringify({ op: 'subscribe', channel: 'book', markets });
  await waitFor(
    'the relay to hold the connection back',
    () => {
      if ([...relay.ws.connections].some((connection) => connection.isHoldingBack)) return true;
      for (let i = 0; i < burst; i++) send(frame);
      return undefined;
    },
    { timeoutMs: 20_000, everyMs: 1 },
  );
}
