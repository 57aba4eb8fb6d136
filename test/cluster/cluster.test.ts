/**
 * Cluster mode end to end: two relays on one Redis and one upstream. Upstream sees one poller per
 * market for the whole cluster; clients on either relay keep books equal to upstream; when the
 * polling relay leaves (gracefully, or by dying) the other takes over.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { priceDataOf } from '../../src/relay/channels/price/codec.ts';
import type { RedisBroker } from '../../src/relay/coordination/redis/broker.ts';
import { bookTargetKey, priceTargetKey } from '../../src/relay/coordination/redis/keys.ts';
import { preferredRelay } from '../../src/relay/coordination/redis/leases/rendezvous.ts';
import type { Relay } from '../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../src/sim/server.ts';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { startChildRelay } from '../support/cluster/child-relay.ts';
import { startClusterRelay } from '../support/cluster/cluster-relays.ts';
import { redisAvailable, useRedis } from '../support/cluster/redis.ts';
import { expectedBook, upstreamBook, upstreamPrices } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

describe.skipIf(!redisAvailable())('cluster mode over Redis', () => {
  const redis = useRedis();
  let sim: SimulatorHandle;
  const relays: Relay[] = [];
  const clients: ProtocolClient[] = [];

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await Promise.all(relays.splice(0).map((relay) => relay.close()));
    await sim.close();
  });

  async function relay(redisUrl = redis.server.url): Promise<Relay> {
    const started = await startClusterRelay(sim.url, redisUrl);
    relays.push(started);
    return started;
  }

  const instanceOf = (of: Relay) => (of.broker as RedisBroker).coordinator.instanceId;

  /**
   * A market whose book and price leases rendezvous hashing gives to `holder` among `instances`
   * (even weights: no relay has measured poll CPU of its own before it holds a lease). The relay
   * that takes both first then keeps them: no lease moves while the test counts polls, however
   * slowly the machine runs. Of 48 markets, each one's two leases go to `holder` with chance 1/4: none does once in 10^6 runs.
   */
  function marketHeldBy(holder: string, instances: string[]): string {
    const market = sim.market
      .marketIds()
      .find((id) =>
        [bookTargetKey(id), priceTargetKey(id)].every(
          (target) => preferredRelay(target, instances) === holder,
        ),
      );
    if (market === undefined) throw new Error('no market whose leases rendezvous hashing gives to one relay');
    return market;
  }

  async function client(of: Relay): Promise<ProtocolClient> {
    const connected = await ProtocolClient.connect(of.url);
    clients.push(connected);
    return connected;
  }

  /** Book polls and price polls each relay made, counted from its own events. */
  function countPolls(of: Relay) {
    const counts = { book: 0, price: 0 };
    of.events.on('poll:done', ({ kind, outcome }) => {
      if (outcome === 'ok' && (kind === 'book' || kind === 'price')) counts[kind] += 1;
    });
    return counts;
  }

  async function expectInSync(viewers: ProtocolClient[], market: string, rounds: number): Promise<void> {
    for (let round = 0; round < rounds; round++) {
      sim.tick();
      const book = await upstreamBook(sim, market);
      const ts = new Date(book.timestamp).toISOString();
      const [price] = await upstreamPrices(sim, [market]);
      for (const viewer of viewers) {
        await waitFor(`round ${round}: book at ${ts}`, () => viewer.view('book', market)?.ts === ts);
        expect(viewer.view('book', market)!.state).toEqual(expectedBook(book, null));
        await waitFor(`round ${round}: price`, () =>
          JSON.stringify(viewer.view('price', market)?.state) === JSON.stringify(priceDataOf(price!))
            ? true
            : undefined,
        );
      }
    }
    for (const viewer of viewers) expect(viewer.violations).toEqual([]);
  }

  it('polls each market once for the whole cluster and keeps clients of both relays in sync', async () => {
    sim = await startSimulator({ markets: 48, seed: 3, tickMs: 0 });
    const [a, b] = [await relay(), await relay()];
    const market = marketHeldBy(instanceOf(a), [instanceOf(a), instanceOf(b)]);
    const [onA, onB] = [await client(a), await client(b)];
    for (const viewer of [onA, onB]) {
      await viewer.request({ op: 'subscribe', channel: 'book', markets: [market] });
      await viewer.request({ op: 'subscribe', channel: 'price', markets: [market] });
    }
    await waitFor('snapshots on both relays', () => onA.view('book', market) && onB.view('book', market));
    // Whichever relay polled first, the leases end with the one rendezvous hashing names.
    await waitFor(
      'the leases with the relay rendezvous hashing names',
      () => a.broker.status().owned === 2 && b.broker.status().owned === 0,
    );
    const [pollsA, pollsB] = [countPolls(a), countPolls(b)];
    await expectInSync([onA, onB], market, 10);
    // One relay polled the book and the prices; the other only applied what it shared.
    expect(pollsB).toEqual({ book: 0, price: 0 });
    // A poll's event follows its numbered publish, which the viewers may have seen first.
    await waitFor('a book poll by relay A counted for every round', () => pollsA.book >= 10);
    const statuses = [a.broker.status(), b.broker.status()];
    expect(statuses.map((status) => status.owned).sort()).toEqual([0, 2]);
    expect(statuses.every((status) => status.connected && status.followed === 2)).toBe(true);

    // The same, as Prometheus sees it.
    const scrape = async (of: Relay) => await (await fetch(`${of.url}/metrics`)).text();
    const metric = (text: string, name: string) =>
      Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    const [textA, textB] = [await scrape(a), await scrape(b)];
    expect(
      metric(textA, 'market_relay_cluster_leases_held') + metric(textB, 'market_relay_cluster_leases_held'),
    ).toBe(2);
    expect([metric(textA, 'market_relay_redis_up'), metric(textB, 'market_relay_redis_up')]).toEqual([1, 1]);
    expect(metric(textA, 'market_relay_cluster_targets_followed')).toBe(2);
  });

  it('hands polling over at once when the polling relay shuts down', async () => {
    sim = await startSimulator({ markets: 48, seed: 3, tickMs: 0 });
    const [a, b] = [await relay(), await relay()];
    const market = marketHeldBy(instanceOf(a), [instanceOf(a), instanceOf(b)]);
    const [onA, onB] = [await client(a), await client(b)];
    for (const viewer of [onA, onB]) {
      await viewer.request({ op: 'subscribe', channel: 'book', markets: [market] });
      await viewer.request({ op: 'subscribe', channel: 'price', markets: [market] });
    }
    await waitFor('snapshots', () => onA.view('book', market) && onB.view('book', market));
    await waitFor(
      'the leases with the relay rendezvous hashing names',
      () => a.broker.status().owned === 2 && b.broker.status().owned === 0,
    );
    relays.splice(relays.indexOf(a), 1);
    await a.close(); // releases its leases (docs/operations.md "Shutdown")
    await waitFor('the other relay to take over', () => b.broker.status().owned === 2);
    await expectInSync([onB], market, 3);
  });

  it('takes over from a relay that dies holding the lease once the lease expires', async () => {
    sim = await startSimulator({ markets: 48, seed: 3, tickMs: 0 });
    // A relay program, so that it can die without a word (the child-relay fixture waits for it to listen).
    const doomed = await startChildRelay([
      `--upstream=${sim.url}`,
      `--redis=${redis.server.url}`,
      '--book-poll-ms=25',
      '--price-poll-ms=25',
      '--upstream-rps=1000',
    ]);
    try {
      const doomedInstance = await doomed.instance();
      const survivor = await relay();
      // The child keeps both leases until it dies: rendezvous hashing names it for both.
      const market = marketHeldBy(doomedInstance, [doomedInstance, instanceOf(survivor)]);
      const onDoomed = await ProtocolClient.connect(doomed.url);
      clients.push(onDoomed);
      await onDoomed.request({ op: 'subscribe', channel: 'book', markets: [market] });
      await onDoomed.request({ op: 'subscribe', channel: 'price', markets: [market] });
      await waitFor('the child to poll', () => onDoomed.view('book', market));

      const viewer = await client(survivor);
      await viewer.request({ op: 'subscribe', channel: 'book', markets: [market] });
      await viewer.request({ op: 'subscribe', channel: 'price', markets: [market] });
      await expectInSync([viewer], market, 2);
      expect(survivor.broker.status().owned).toBe(0); // following the child's results

      await doomed.stop('SIGKILL'); // no shutdown, no release: the lease stays until it expires
      await waitFor('the lease to expire and move', () => survivor.broker.status().owned === 2, {
        timeoutMs: 10_000,
      });
      await expectInSync([viewer], market, 3);
    } finally {
      await doomed.stop('SIGKILL');
    }
  });

  it('keeps serving, polling for itself, while Redis is unreachable, and says so on /health', async () => {
    sim = await startSimulator({ markets: 2, seed: 3, tickMs: 0 });
    const market = sim.market.marketIds()[0]!;
    const lonely = await relay('redis://127.0.0.1:1');
    const viewer = await client(lonely);
    await viewer.request({ op: 'subscribe', channel: 'book', markets: [market] });
    await viewer.request({ op: 'subscribe', channel: 'price', markets: [market] });
    await waitFor('snapshot', () => viewer.view('book', market) && viewer.view('price', market));
    await expectInSync([viewer], market, 2);
    const health = await fetch(`${lonely.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ redis: { connected: false, lastError: expect.any(String) } });
  });
});
