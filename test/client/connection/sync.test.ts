/**
 * The SDK against a real relay and simulator: its books and prices stay equal to upstream over
 * ticks, across a forced disconnect (resumed, no snapshot) and across a relay restart (new epoch).
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startRelay } from '../../../src/relay-server.ts';
import { type Harness, useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';
import {
  connectRecorded,
  expectBooksEqualUpstream,
  expectPricesEqualUpstream,
  type RecordedClient,
  recordResyncs,
  tickAndPublish,
} from '../sdk-support.ts';

describe('client SDK: streams stay equal to upstream', () => {
  let harness: Harness;
  const { opened, start: startTestHarness } = useHarness();

  function sdk(url: string, options: Parameters<typeof connectRecorded>[1] = {}): RecordedClient {
    const recorded = connectRecorded(url, options);
    opened.push(recorded.client);
    return recorded;
  }

  it('keeps full and depth-10 books and prices equal to upstream over several ticks', async () => {
    // Room for exactly the nine streams below, so a tenth is refused.
    harness = await startTestHarness({
      sim: { markets: 4 },
      relay: { tuning: { connection: { maxStreams: 9 } } },
    });
    const markets = harness.sim.market.marketIds().slice(0, 3);
    const { client } = sdk(harness.relay.url);
    const books = markets.flatMap((m) => [client.subscribeBook(m), client.subscribeBook(m, { depth: 10 })]);
    const prices = markets.map((m) => client.subscribePrice(m));
    const resyncs = recordResyncs(books);
    let updates = 0;
    for (const book of books) book.on('update', () => updates++);
    await expectBooksEqualUpstream(harness.sim, books);
    for (let round = 0; round < 3; round++) {
      await tickAndPublish(harness.sim, harness.relay, markets[0]!);
      await expectBooksEqualUpstream(harness.sim, books);
      await expectPricesEqualUpstream(harness.sim, prices);
    }
    expect(updates).toBeGreaterThan(0);
    expect(resyncs).toEqual([]);
    expect(books.every((book) => book.status === 'live')).toBe(true);
    // The same stream asked for twice is one subscription.
    expect(client.subscribeBook(markets[0]!, { depth: 10 })).toBe(books[1]);
    expect(() => client.subscribeBook('not-a-market-id')).toThrow(TypeError);
    // A subscribe the relay refuses ends that stream with the relay's error, and nothing else.
    const refused = client.subscribeBook(harness.sim.market.marketIds()[3]!);
    const codes: string[] = [];
    refused.on('error', (error) => codes.push(error.code));
    await waitFor('the refusal', () => refused.status === 'closed');
    expect(codes).toEqual(['limit_exceeded']);
    expect(client.streams).not.toContain(refused);
    expect(books.every((book) => book.status === 'live')).toBe(true);
  });

  it('reconnects after a forced disconnect and resumes without a snapshot', async () => {
    harness = await startTestHarness({ sim: { markets: 3 } });
    const markets = harness.sim.market.marketIds().slice(0, 2);
    // While the gate is shut, connection attempts go to a closed port and fail: the test decides
    // when the SDK may come back, so the relay publishes updates it must replay.
    let gateOpen = true;
    const relayUrl = harness.relay.url.replace('http', 'ws') + '/v1/ws';
    const Gated = class extends WebSocket {
      constructor(url: string) {
        super(gateOpen ? url : 'ws://127.0.0.1:1/v1/ws');
      }
    };
    const { client, opens } = sdk(relayUrl, { WebSocket: Gated });
    const books = markets.map((m) => client.subscribeBook(m));
    await expectBooksEqualUpstream(harness.sim, books);
    let snapshots = 0;
    for (const book of books) book.on('snapshot', () => snapshots++);
    const resyncs = recordResyncs(books);
    const reconnecting: number[] = [];
    client.on('reconnecting', ({ attempt }) => reconnecting.push(attempt));

    gateOpen = false;
    for (const connection of harness.relay.ws.connections) connection.terminate();
    await waitFor('the books to go stale', () => books.every((book) => book.status === 'stale'));
    await tickAndPublish(harness.sim, harness.relay, markets[0]!);
    await tickAndPublish(harness.sim, harness.relay, markets[0]!);
    await waitFor('a failed reconnect attempt', () => reconnecting.length >= 2);
    gateOpen = true;

    await waitFor('the reconnect', () => opens.includes(true));
    await expectBooksEqualUpstream(harness.sim, books);
    expect(snapshots).toBe(0);
    expect(resyncs).toEqual([]);
  });

  it('follows a relay restart on the same port: new epoch, fresh snapshots, books equal upstream', async () => {
    harness = await startTestHarness({ sim: { markets: 3 } });
    const markets = harness.sim.market.marketIds().slice(0, 2);
    const { client, closes } = sdk(harness.relay.url);
    const books = markets.flatMap((m) => [client.subscribeBook(m), client.subscribeBook(m, { depth: 10 })]);
    await expectBooksEqualUpstream(harness.sim, books);
    const epochsBefore = books.map((book) => book.epoch);
    const resyncs = recordResyncs(books);

    const port = Number(new URL(harness.relay.url).port);
    await harness.relay.close();
    await waitFor('the SDK to see the 1001 close', () => closes.includes(1001));
    harness.sim.tick();
    const restarted = await startRelay(
      {
        port,
        host: '127.0.0.1',
        upstream: harness.sim.url,
        bookPollMs: 20,
        pricePollMs: 20,
        upstreamConcurrency: 16,
        upstreamRps: 1000,
        logLevel: 'silent',
        simMarkets: 3,
        simSeed: 7,
        tuning: { heartbeatMs: 60_000, lingerMs: 2_000 },
      },
      pino({ level: 'silent' }),
    );
    opened.push(restarted);

    await waitFor('snapshots in the new epoch', () =>
      books.every((book, i) => book.epoch !== undefined && book.epoch !== epochsBefore[i]),
    );
    await expectBooksEqualUpstream(harness.sim, books);
    expect(resyncs).toEqual(books.map(() => 'epoch'));
    await tickAndPublish(harness.sim, restarted, markets[0]!);
    await expectBooksEqualUpstream(harness.sim, books);
  });
});
