/**
 * The SDK given several relay URLs: a URL where nothing answers is passed over, on either
 * transport. Given two relays of one cluster, when the first is stopped it goes on with the
 * second, which resumes its streams (`recovered: true`, the missed updates replayed, no snapshot) because
 * cluster mode numbers each stream once for every relay (docs/cluster.md).
 */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connect } from '../../../packages/client/src/node.ts';
import type { SubscribedMessage } from '../../../packages/protocol/src/protocol/messages.ts';
import type { Relay } from '../../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { startClusterRelay } from '../../support/cluster/cluster-relays.ts';
import { redisAvailable, useRedis } from '../../support/cluster/redis.ts';
import { upstreamBook, useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';
import { expectBooksEqualUpstream, fastBackoff, recordResyncs } from '../sdk-support.ts';

describe('client SDK with several relay URLs, one of them gone', () => {
  const { opened, start } = useHarness();

  it.each(['websocket', 'sse'] as const)('moves on to the next URL over %s', async (transport) => {
    const harness = await start({ sim: { markets: 2 } });
    // Port 1: nothing listens there, as for a relay that is gone.
    const client = connect(['http://127.0.0.1:1', harness.relay.url], { transport, backoff: fastBackoff });
    opened.push(client);
    const reconnecting: string[] = [];
    client.on('reconnecting', ({ url }) => reconnecting.push(url));
    const book = client.subscribeBook(harness.sim.market.marketIds()[0]!);
    await expectBooksEqualUpstream(harness.sim, [book]);
    expect(new URL(client.url).port).toBe(new URL(harness.relay.url).port);
    expect(new URL(reconnecting[0]!).port).toBe(new URL(harness.relay.url).port);
  });
});

describe.skipIf(!redisAvailable())('client SDK with several relay URLs in cluster mode', () => {
  const redis = useRedis();
  let sim: SimulatorHandle | undefined;
  const relays: Relay[] = [];
  const closers: { close(): Promise<void> }[] = [];

  afterEach(async () => {
    await Promise.all(closers.splice(0).map((closer) => closer.close()));
    await Promise.all(relays.splice(0).map((relay) => relay.close()));
    await sim?.close();
  });

  async function relay(): Promise<Relay> {
    const started = await startClusterRelay(sim!.url, redis.server.url);
    relays.push(started);
    return started;
  }

  it('goes on with the second relay when the first is stopped, resuming every stream', async () => {
    sim = await startSimulator({ markets: 4, seed: 3, tickMs: 0 });
    const markets = sim.market.marketIds().slice(0, 2);
    const [first, second] = [await relay(), await relay()];

    // Every frame the SDK receives, by the relay it came from. While the gate is shut, sockets
    // go to a closed port: the test decides when the SDK may reach the second relay, so that
    // there are updates it missed.
    const received: { url: string; message: { type: string } }[] = [];
    let gateOpen = true;
    const Recording = class extends WebSocket {
      constructor(url: string, protocols?: string[]) {
        super(gateOpen ? url : 'ws://127.0.0.1:1/v1/ws', protocols);
        this.on('message', (data) => received.push({ url, message: JSON.parse(data.toString()) }));
      }
    };
    const client = connect([first.url, second.url], {
      WebSocket: Recording,
      encoding: 'json',
      backoff: fastBackoff,
    });
    closers.push(client);
    const opened: string[] = [];
    client.on('open', ({ url }) => opened.push(url));
    const books = markets.flatMap((m) => [client.subscribeBook(m), client.subscribeBook(m, { depth: 10 })]);
    await expectBooksEqualUpstream(sim, books);
    expect(opened).toEqual([`${first.url.replace('http', 'ws')}/v1/ws`]);
    let snapshots = 0;
    for (const book of books) book.on('snapshot', () => snapshots++);
    const resyncs = recordResyncs(books);

    // A client of the second relay keeps the cluster polling these markets meanwhile.
    const watcher = await ProtocolClient.connect(second.url);
    closers.push(watcher);
    watcher.send({ op: 'subscribe', id: 1, channel: 'book', markets });
    await waitFor('the watcher on the same books', () => markets.every((m) => watcher.view('book', m)));

    gateOpen = false;
    await first.close();
    relays.splice(relays.indexOf(first), 1);
    await waitFor('the books to go stale', () => books.every((book) => book.status === 'stale'));
    for (let round = 0; round < 2; round++) {
      sim.tick();
      const ts = new Date((await upstreamBook(sim, markets[0]!)).timestamp).toISOString();
      await waitFor(
        `the second relay to publish tick ${round}`,
        () => watcher.view('book', markets[0]!)?.ts === ts,
      );
    }
    gateOpen = true;

    const secondUrl = `${second.url.replace('http', 'ws')}/v1/ws`;
    await waitFor('the SDK on the second relay', () => opened.includes(secondUrl));
    expect(client.url).toBe(secondUrl);
    await expectBooksEqualUpstream(sim, books);
    const answers = received
      .filter(({ url, message }) => url === secondUrl && message.type === 'subscribed')
      .map(({ message }) => (message as SubscribedMessage).recovered);
    expect(answers.flatMap((recovered) => Object.values(recovered ?? {}))).toEqual([true, true, true, true]);
    expect(snapshots).toBe(0);
    expect(resyncs).toEqual([]);
    expect(books.every((book) => book.status === 'live')).toBe(true);
  });
});
