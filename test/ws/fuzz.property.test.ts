/**
 * Client fuzzing, property-based (fast-check) against a real relay over real sockets: each run opens
 * a connection and sends an arbitrary sequence of frames (garbage text, arbitrary JSON, requests with
 * mutated fields, binary frames, invalid UTF-8), then a ping. Whatever was sent, the relay answers
 * only with protocol messages and documented error codes, the connection either still answers the
 * ping or was closed with a documented close code, and a well-behaved client on the same relay keeps
 * every stream `live` with no gap and correct checksums.
 */
import { once } from 'node:events';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { closeCodes, errorCodes } from '../../packages/protocol/src/protocol/messages.ts';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { type Harness, startHarness } from '../support/harness.ts';
import { propertyRuns } from '../support/property-runs.ts';
import { waitFor } from '../support/wait-for.ts';

/** Close codes a client may see for what it sent (protocol.md "Close codes"). */
const DOCUMENTED_CLOSES = new Set<number>([1007, ...Object.values(closeCodes)]);
const REPLY_TYPES = new Set([
  'subscribed',
  'unsubscribed',
  'error',
  'pong',
  'snapshot',
  'update',
  'status',
  'heartbeat',
]);

type Fuzz = { kind: 'text'; text: string } | { kind: 'binary'; bytes: Uint8Array } | { kind: 'badUtf8' };

function frames(markets: string[]): fc.Arbitrary<Fuzz[]> {
  const market = fc.oneof(fc.constantFrom(...markets), fc.uuid(), fc.string({ maxLength: 40 }));
  const anything = fc.jsonValue({ maxDepth: 3 });
  const request = fc.record(
    {
      op: fc.oneof(
        fc.constantFrom('subscribe', 'unsubscribe', 'ping'),
        fc.string({ maxLength: 12 }),
        anything,
      ),
      id: fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), anything),
      channel: fc.oneof(fc.constantFrom('book', 'price'), fc.string({ maxLength: 12 }), anything),
      markets: fc.oneof(fc.array(market, { maxLength: 8 }), anything),
      depth: fc.oneof(fc.constantFrom(10, 50, null), fc.integer(), anything),
      resume: fc.oneof(fc.dictionary(market, fc.record({ epoch: fc.string(), seq: fc.integer() })), anything),
    },
    { requiredKeys: [] },
  );
  const frame: fc.Arbitrary<Fuzz> = fc.oneof(
    {
      weight: 6,
      arbitrary: request.map((value) => ({ kind: 'text' as const, text: JSON.stringify(value) })),
    },
    {
      weight: 2,
      arbitrary: anything.map((value) => ({ kind: 'text' as const, text: JSON.stringify(value) })),
    },
    { weight: 2, arbitrary: fc.string({ maxLength: 200 }).map((text) => ({ kind: 'text' as const, text })) },
    {
      weight: 1,
      arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => ({ kind: 'binary' as const, bytes })),
    },
    { weight: 1, arbitrary: fc.constant({ kind: 'badUtf8' as const }) },
  );
  // Fewer frames than the request burst: rate limiting is tested on its own.
  return fc.array(frame, { minLength: 1, maxLength: 25 });
}

describe('client fuzzing', () => {
  let harness: Harness;
  let bystander: ProtocolClient;
  let markets: string[];

  beforeAll(async () => {
    harness = await startHarness({
      sim: { markets: 4, tickMs: 50 },
      // Compression on: clients that negotiated deflate send their long frames late (bad-frame-close.test.ts).
      relay: { bookPollMs: 200, pricePollMs: 200, compression: true },
    });
    markets = harness.sim.market.marketIds();
    bystander = await ProtocolClient.connect(harness.relay.url);
    await bystander.request({ op: 'subscribe', channel: 'book', markets, depth: 10 });
    await bystander.request({ op: 'subscribe', channel: 'price', markets });
    await waitFor('bystander snapshots', () => markets.every((market) => bystander.view('book', market, 10)));
  });
  afterAll(async () => {
    await bystander?.close();
    await harness?.stop();
  });

  it('answers any frame sequence with protocol messages or a documented close, never hurting another client', async () => {
    await fc.assert(
      fc.asyncProperty(frames(markets), async (sequence) => {
        const ws = new WebSocket(`${harness.relay.url.replace('http', 'ws')}/v1/ws`);
        const replies: Record<string, unknown>[] = [];
        let closeCode: number | undefined;
        ws.on('message', (data) => replies.push(JSON.parse(data.toString()) as Record<string, unknown>));
        ws.on('close', (code) => {
          closeCode = code;
        });
        ws.on('error', () => {
          // a close the relay decided is checked below
        });
        await once(ws, 'open');
        for (const frame of sequence) {
          if (frame.kind === 'text') ws.send(frame.text);
          else if (frame.kind === 'binary') ws.send(frame.bytes, { binary: true });
          else ws.send(Buffer.from([0xc3, 0x28, 0xff]), { binary: false });
        }
        ws.send(JSON.stringify({ op: 'ping', id: 'fuzz-final' }));
        await waitFor(
          'the final pong or a close',
          () =>
            closeCode !== undefined ||
            replies.some((reply) => reply.type === 'pong' && reply.id === 'fuzz-final'),
        );
        if (closeCode !== undefined) expect(DOCUMENTED_CLOSES).toContain(closeCode);
        for (const reply of replies) {
          expect(REPLY_TYPES).toContain(reply.type);
          if (reply.type === 'error') {
            expect(errorCodes).toContain(reply.code);
            expect(typeof reply.message).toBe('string');
          }
        }
        if (ws.readyState === WebSocket.OPEN) {
          const closed = once(ws, 'close');
          ws.close();
          await closed;
        }
      }),
      { numRuns: propertyRuns(60) },
    );
    expect(bystander.violations).toEqual([]);
    expect(bystander.closeCode).toBeUndefined();
    // Still streaming, every stream live.
    const seq = bystander.view('price', markets[0]!)?.seq ?? 0;
    await waitFor(
      'more updates for the bystander',
      () => (bystander.view('price', markets[0]!)?.seq ?? 0) > seq,
    );
    expect(bystander.of('status').filter((status) => status.state !== 'live')).toEqual([]);
  });
});
