/**
 * A client that keeps up is never closed as a slow consumer (protocol.md "Slow consumers"), however
 * small the high-water mark: holding back that began for bytes waiting in the coalescing queue ends
 * when they have left (ws/socket-writer.ts `onDrained`).
 */
import { describe, expect, it } from 'vitest';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { type Harness, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

describe('clients that keep up', () => {
  let harness: Harness;
  const { opened, start } = useHarness();

  it('never closes clients that keep up, with a 64 KiB high-water mark and compression off', async () => {
    harness = await start({
      sim: { markets: 50, tickMs: 20 },
      relay: {
        compression: false,
        tuning: { connection: { highWaterBytes: 64 * 1024, slowConsumerTimeoutMs: 500 } },
      },
    });
    const markets = harness.sim.market.marketIds();
    const slowCloses: number[] = [];
    harness.relay.events.on('connection:slow-consumer', ({ id }) => slowCloses.push(id));
    const clients: ProtocolClient[] = [];
    for (let i = 0; i < 3; i += 1) {
      const client = await ProtocolClient.connect(harness.relay.url);
      opened.push(client);
      clients.push(client);
      // Fifty snapshots at once: more than the high-water mark waits for the coalescing window.
      await client.request({ op: 'subscribe', channel: 'book', markets });
      await client.request({ op: 'subscribe', channel: 'trades', markets });
    }
    const published = () => harness.relay.registry.get({ channel: 'book', market: markets[0]! })?.seq ?? 0;
    const seq = published();
    const startedAt = performance.now();
    // Several slow-consumer timeouts' worth of updates.
    await waitFor(
      'updates for two seconds',
      () => published() > seq + 10 && performance.now() - startedAt > 2_000,
      {
        timeoutMs: 20_000,
      },
    );
    expect(slowCloses).toEqual([]);
    expect(clients.map((client) => client.closeCode)).toEqual([undefined, undefined, undefined]);
  });
});
