/**
 * 4008 reaches the client (protocol.md "Slow consumers"): a client that stopped reading and reads
 * again seconds after the relay decided to close it finds the close frame, compressed or not, rather
 * than a reset.
 */
import { describe, expect, it } from 'vitest';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { type Harness, useHarness } from '../support/harness.ts';
import { readBackToClose, slowConsumerHarness } from '../support/slow-consumer.ts';
import { waitFor } from '../support/wait-for.ts';

/** How long after the relay's decision the stalled clients read again (the acceptance figure). */
const READ_AGAIN_AFTER_MS = 5_000;

describe('slow-consumer close', () => {
  let harness: Harness;
  const { opened, start } = useHarness();

  it('is seen as 4008 by a client that reads again 5 s after the decision, compressed or not', async () => {
    const options = slowConsumerHarness(200);
    harness = await start({ ...options, relay: { ...options.relay, compression: true } });
    const markets = harness.sim.market.marketIds();
    const decided = new Map<number, number>();
    harness.relay.events.on('connection:slow-consumer', ({ id }) => decided.set(id, performance.now()));
    const plain = await ProtocolClient.connect(harness.relay.url, { perMessageDeflate: false });
    const deflate = await ProtocolClient.connect(harness.relay.url);
    opened.push(plain, deflate);
    expect(deflate.ws.extensions).toContain('permessage-deflate');
    expect(plain.ws.extensions).toBe('');

    const frame = JSON.stringify({ op: 'subscribe', channel: 'book', markets });
    for (const client of [plain, deflate]) client.socket!.pause();
    // Each repeated subscribe is answered with a fresh snapshot per market, until both are closed.
    await waitFor(
      'the relay to close both stalled clients',
      () => {
        if (decided.size === 2) return true;
        // Once both are held back, more subscribes would only queue in the clients' own buffers.
        const heldBack = [...harness.relay.ws.connections].filter((c) => c.isHoldingBack).length;
        if (heldBack < 2)
          for (let i = 0; i < 50; i += 1) for (const client of [plain, deflate]) client.send(frame);
        return undefined;
      },
      { timeoutMs: 30_000, everyMs: 1 },
    );
    const lastDecision = Math.max(...decided.values());
    // The scenario itself: the clients read again only this long after the decision.
    await new Promise((resolve) =>
      setTimeout(resolve, lastDecision + READ_AGAIN_AFTER_MS - performance.now()),
    );
    const [plainRead, deflateRead] = await Promise.all(
      [plain, deflate].map((client) => readBackToClose(client.socket!)),
    );
    expect([plainRead!.closeCode, deflateRead!.closeCode]).toEqual([4008, 4008]);
    // Each read back what the relay had sent before the close, and the compressed one read it compressed.
    expect(plainRead!.frames).toBeGreaterThan(0);
    expect(plainRead!.compressedFrames).toBe(0);
    expect(deflateRead!.compressedFrames).toBeGreaterThan(0);
  }, 45_000);
});
