/**
 * The maximum-age scenario both schedulers are held to (docs/scheduler.md): an over-asked relay
 * confirms every stream at least once per `--max-age-ms`, and no stream goes stale. One test file per
 * scheduler, so each file stays short.
 */
import { expect } from 'vitest';
import { ProtocolClient } from './clients/protocol-client.ts';
import type { HarnessFixture } from './harness.ts';
import { waitFor } from './wait-for.ts';

const MAX_AGE_MS = 4_000;

export async function expectMaxAgeHeld(
  { opened, start }: HarnessFixture,
  scheduler: 'freshness' | 'round-robin',
): Promise<void> {
  const harness = await start({
    sim: { markets: 40, tickMs: 100 },
    // 40 books every 50 ms would be 800 requests/s; the budget is 18.
    relay: { bookPollMs: 50, upstreamRps: 20, maxAgeMs: MAX_AGE_MS, scheduler },
  });
  const markets = harness.sim.market.marketIds();
  const client = await ProtocolClient.connect(harness.relay.url);
  opened.push(client);
  await client.request({ op: 'subscribe', channel: 'book', markets });
  await waitFor('every snapshot', () => markets.every((market) => client.view('book', market)));

  // A stream left unconfirmed for longer than the maximum age shows within any window longer than it.
  let oldest = 0;
  const from = Date.now();
  await waitFor(
    'one and a half maximum ages of observation',
    () => {
      const now = Date.now();
      for (const stream of harness.relay.registry.streams())
        oldest = Math.max(oldest, now - stream.lastSuccessAt);
      return now - from >= 1.5 * MAX_AGE_MS;
    },
    { timeoutMs: 3 * MAX_AGE_MS, everyMs: 50 },
  );
  expect(oldest).toBeGreaterThan(0);
  expect(oldest).toBeLessThanOrEqual(MAX_AGE_MS);
  expect(client.of('status').filter((status) => status.state === 'stale')).toEqual([]);
  expect(client.violations).toEqual([]);
}
