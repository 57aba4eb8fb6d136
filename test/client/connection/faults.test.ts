/**
 * The SDK through faults it must heal by itself: a corrupted update (checksum mismatch -> resync),
 * a relay holding the connection back (conflation snapshots, no gap), and API-key auth.
 */
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { ResyncReason } from '../../../packages/client/src/node.ts';
import type { BookData } from '../../../packages/protocol/src/protocol/messages.ts';
import { type Harness, useHarness } from '../../support/harness.ts';
import { floodUntilHeldBack, slowConsumerHarness } from '../../support/slow-consumer.ts';
import { waitFor } from '../../support/wait-for.ts';
import { RelayProxy } from '../relay-proxy.ts';
import {
  connectRecorded,
  expectBooksEqualUpstream,
  type RecordedClient,
  tickAndPublish,
} from '../sdk-support.ts';

describe('client SDK: faults', () => {
  let harness: Harness;
  const { opened, start: startTestHarness } = useHarness();

  function sdk(url: string, options: Parameters<typeof connectRecorded>[1] = {}): RecordedClient {
    const recorded = connectRecorded(url, options);
    opened.push(recorded.client);
    return recorded;
  }

  it('detects a corrupted update by its checksum, resyncs that stream and recovers', async () => {
    harness = await startTestHarness({ sim: { markets: 3 } });
    const [target, other] = harness.sim.market.marketIds() as [string, string];
    const proxy = await RelayProxy.start(harness.relay.url);
    opened.push(proxy);
    const { client, errors } = sdk(proxy.url);
    const book = client.subscribeBook(target);
    const bystander = client.subscribeBook(other);
    await expectBooksEqualUpstream(harness.sim, [book, bystander]);
    const resyncs: ResyncReason[] = [];
    book.on('resync', ({ reason }) => resyncs.push(reason));
    bystander.on('resync', ({ reason }) => resyncs.push(`bystander ${reason}` as ResyncReason));

    // A frame that is not JSON is reported, never thrown, and costs nothing else.
    proxy.links[0]!.client.send('not json');
    await waitFor('the malformed-frame error', () =>
      errors.some((error) => error.code === 'malformed_frame'),
    );

    let corrupted = false;
    proxy.transform = (text) => {
      const message = JSON.parse(text) as { type: string; market?: string; data: BookData };
      if (corrupted || message.type !== 'update' || message.market !== target) return text;
      corrupted = true;
      // One size changed in transit: the relay's checksum no longer matches the book it gives.
      const level = message.data.bids[0] ?? message.data.asks[0];
      if (level === undefined) return text.replace('"checksum":', '"checksum":1');
      level[1] = level[1] === '0' ? '1' : `${level[1]}1`;
      return JSON.stringify(message);
    };
    await tickAndPublish(harness.sim, harness.relay, target);
    await waitFor('the corrupted update', () => corrupted);
    await waitFor('the resync', () => resyncs.length > 0);
    expect(resyncs).toEqual(['checksum']);
    await expectBooksEqualUpstream(harness.sim, [book, bystander]);
    await tickAndPublish(harness.sim, harness.relay, target);
    await expectBooksEqualUpstream(harness.sim, [book, bystander]);
    expect(resyncs).toEqual(['checksum']);
  });

  it('takes conflation snapshots from a relay that held it back, without a gap resync', async () => {
    harness = await startTestHarness(slowConsumerHarness());
    const markets = harness.sim.market.marketIds();
    const conflations: number[] = [];
    harness.relay.events.on('connection:conflated', ({ streams }) => conflations.push(streams));
    const proxy = await RelayProxy.start(harness.relay.url);
    opened.push(proxy);
    const { client } = sdk(proxy.url);
    const books = markets.map((market) => client.subscribeBook(market));
    await expectBooksEqualUpstream(harness.sim, books);
    const resyncs: ResyncReason[] = [];
    let snapshots = 0;
    for (const book of books) {
      book.on('resync', ({ reason }) => resyncs.push(reason));
      book.on('snapshot', () => snapshots++);
    }

    // The proxy stops reading from the relay and floods it with repeated subscribes (each answered
    // with a snapshot per market) until the relay holds the connection back.
    const link = proxy.links[0]!;
    link.relaySocket!.pause();
    await floodUntilHeldBack(harness.relay, (frame) => link.relay.send(frame), markets, 1);
    for (let i = 0; i < 3; i++) await tickAndPublish(harness.sim, harness.relay, markets[0]!);
    expect([...harness.relay.ws.connections][0]!.isHoldingBack).toBe(true);

    link.relaySocket!.resume();
    await waitFor('the conflation', () => conflations.length > 0);
    await expectBooksEqualUpstream(harness.sim, books);
    expect(snapshots).toBeGreaterThanOrEqual(markets.length);
    expect(resyncs).toEqual([]);
    expect(link.client.readyState).toBe(WebSocket.OPEN);
  });

  it('abandons a connection that goes silent (no heartbeat) and comes back with the books intact', async () => {
    harness = await startTestHarness({ sim: { markets: 2 } });
    const market = harness.sim.market.marketIds()[0]!;
    const proxy = await RelayProxy.start(harness.relay.url);
    opened.push(proxy);
    const { client, closes } = sdk(proxy.url, { deadAfterMs: 300 });
    const book = client.subscribeBook(market);
    await expectBooksEqualUpstream(harness.sim, [book]);

    // The socket stays open but nothing gets through: only the SDK's watchdog can notice.
    proxy.transform = () => undefined;
    await waitFor('the watchdog to close the silent socket', () => closes.includes(4000));
    proxy.transform = (text) => text;
    await tickAndPublish(harness.sim, harness.relay, market);
    await expectBooksEqualUpstream(harness.sim, [book]);
    expect(proxy.links.length).toBeGreaterThanOrEqual(2);
  });

  it('answers API-key auth with a header (Node) or ?token= (injected WebSocket), and surfaces a refusal', async () => {
    harness = await startTestHarness({ sim: { markets: 2 }, relay: { apiKeys: ['k'] } });
    const market = harness.sim.market.marketIds()[0]!;
    const withHeader = sdk(harness.relay.url, { apiKey: 'k' }).client.subscribeBook(market);
    const withToken = sdk(harness.relay.url, { apiKey: 'k', WebSocket }).client.subscribeBook(market, {
      depth: 10,
    });
    await expectBooksEqualUpstream(harness.sim, [withHeader, withToken]);

    const refused = sdk(harness.relay.url, { apiKey: 'wrong' });
    const book = refused.client.subscribeBook(market);
    await waitFor('the refusal', () => refused.client.status === 'closed');
    expect(refused.errors.map((error) => error.code)).toContain('refused');
    expect(book.status).toBe('closed');
    expect(book.state).toBeUndefined();
  });
});
