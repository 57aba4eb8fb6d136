/**
 * permessage-deflate (protocol.md "Compression"): a client that offers it gets each stream message
 * as the one compressed frame the relay built for every compressing client, and still rebuilds
 * upstream's books exactly; a client that does not offer it gets plain frames.
 */
import { constants, deflateRawSync, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { encodeDeflatedFrame, toFrame, windowBitsFor } from '../../src/relay/streams/frame.ts';
import { sharesCompressedFrames } from '../../src/ws/endpoint.ts';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { expectedBook, type Harness, upstreamBook, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

describe('compressed frames', () => {
  it('are RFC 7692 messages: RSV1 set, a raw DEFLATE body without the final 00 00 ff ff', () => {
    const payload = Buffer.from(
      JSON.stringify({ bids: Array.from({ length: 200 }, (_, i) => [`0.${i}`, '1']) }),
    );
    const wire = encodeDeflatedFrame(payload);
    expect(wire[0]).toBe(0xc1);
    const length = wire[1] === 126 ? wire.readUInt16BE(2) : wire[1]!;
    const body = wire.subarray(wire.length - length);
    const tail = Buffer.from([0, 0, 0xff, 0xff]);
    const inflated = inflateRawSync(Buffer.concat([body, tail]), { finishFlush: constants.Z_SYNC_FLUSH });
    expect(inflated).toEqual(payload);
    expect(wire.length).toBeLessThan(payload.length / 3);
  });

  it.each([1, 249, 250, 251, 500, 762, 763, 5_000, 40_000, 200_000])(
    'of %i bytes are what a 15-bit window gives, from the smallest window reaching over the payload',
    (size) => {
      const levels = Array.from({ length: size }, (_, i) => [`0.${(i * 7919) % 997}`, String(i % 13)]);
      const payload = Buffer.from(JSON.stringify({ bids: levels }).slice(0, size));
      const wire = encodeDeflatedFrame(payload);
      const fullWindow = deflateRawSync(payload, { finishFlush: constants.Z_SYNC_FLUSH });
      expect(wire.subarray(wire.length - (fullWindow.length - 4))).toEqual(fullWindow.subarray(0, -4));
    },
  );

  it('use a window that reaches back over the whole payload, 9 to 15 bits', () => {
    expect([1, 250, 251, 762, 763, 16_122, 16_123, 1_000_000].map(windowBitsFor)).toEqual([
      9, 9, 10, 10, 11, 14, 15, 15,
    ]);
  });

  it('are built once per message, on first use', () => {
    const frame = toFrame({ type: 'heartbeat', n: 1, ts: '2026-01-01T00:00:00.000Z' });
    expect(frame.deflate()).toBe(frame.deflate());
  });

  it.each([
    ['permessage-deflate; server_no_context_takeover; client_no_context_takeover', true],
    ['permessage-deflate; server_no_context_takeover; server_max_window_bits=15', true],
    ['permessage-deflate; server_no_context_takeover; server_max_window_bits=10', false],
    ['permessage-deflate; client_max_window_bits=15', false],
    ['', false],
  ])('are sent where the negotiated extensions are %j: %s', (extensions, shares) => {
    expect(sharesCompressedFrames(extensions)).toBe(shares);
  });
});

describe('WebSocket compression', () => {
  let harness: Harness;
  const { opened: clients, start } = useHarness();

  async function connect(perMessageDeflate: boolean): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(harness.relay.url, { perMessageDeflate });
    clients.push(client);
    return client;
  }

  it('serves compressing and plain clients the same books, the compressing ones in far fewer bytes', async () => {
    harness = await start({ sim: { markets: 3 }, relay: { compression: true } });
    const markets = harness.sim.market.marketIds();
    const compressing = await connect(true);
    const plain = await connect(false);
    expect(compressing.ws.extensions).toBe('permessage-deflate');
    expect(plain.ws.extensions).toBe('');
    expect([...harness.relay.ws.connections].map((c) => c.compresses).sort()).toEqual([false, true]);

    for (const client of [compressing, plain]) {
      await client.request({ op: 'subscribe', channel: 'book', markets });
      await client.request({ op: 'subscribe', channel: 'book', markets, depth: 10 });
    }
    for (let round = 0; round < 3; round++) {
      const stream = harness.relay.registry.get({ channel: 'book', market: markets[0]! })!;
      const seq = stream.seq;
      harness.sim.tick();
      await waitFor('the relay to publish the tick', () => stream.seq > seq);
    }
    for (const market of markets) {
      const book = await upstreamBook(harness.sim, market);
      for (const depth of [null, 10] as const) {
        const expected = JSON.stringify(expectedBook(book, depth));
        for (const client of [compressing, plain]) {
          await waitFor(`${market} depth ${depth} equal to upstream`, () =>
            JSON.stringify(client.view('book', market, depth)?.state) === expected ? true : undefined,
          );
        }
      }
    }
    expect(compressing.violations).toEqual([]);
    expect(plain.violations).toEqual([]);
    // The compressing client's socket carried fewer bytes than the JSON it decoded; the plain
    // one's, the JSON plus frame headers. Per client, so the two may have seen different counts.
    const jsonBytes = (client: ProtocolClient) =>
      client.messages.reduce((sum, message) => sum + Buffer.byteLength(JSON.stringify(message)), 0);
    expect(compressing.socket!.bytesRead).toBeLessThan(jsonBytes(compressing) * 0.85);
    expect(plain.socket!.bytesRead).toBeGreaterThan(jsonBytes(plain));
  });

  it('is on by default, for a client that offers it', async () => {
    harness = await start({ sim: { markets: 1 } });
    const client = await connect(true);
    expect(client.ws.extensions).toBe('permessage-deflate');
    expect([...harness.relay.ws.connections][0]!.compresses).toBe(true);
  });

  it('is negotiated with nobody when the operator turns it off', async () => {
    harness = await start({ sim: { markets: 1 }, relay: { compression: false } });
    const client = await connect(true);
    expect(client.ws.extensions).toBe('');
    expect([...harness.relay.ws.connections][0]!.compresses).toBe(false);
  });
});
