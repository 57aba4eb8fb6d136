/**
 * The SDK's wildcard subscriptions (docs/client.md "Every active market"): `subscribeAll(channel)`
 * hands each active market's stream to `added`, a market added upstream arrives without a new
 * subscribe, one that expires ends its stream and comes through `removed`, `unsubscribe()` ends
 * them all; after a reconnect the markets still active keep their stream objects, a market that
 * left meanwhile is removed and one that appeared is added.
 */
import { describe, expect, it } from 'vitest';
import type { PriceSubscription } from '../../../packages/client/src/node.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { type Harness, useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';
import { RelayProxy } from '../relay-proxy.ts';
import { connectRecorded } from '../sdk-support.ts';

/** Waits until the relay's active catalogue shows `check` true (seen through a plain client). */
async function catalogueShows(
  harness: Harness,
  opened: { close(): unknown }[],
  check: (active: Record<string, unknown>) => boolean,
): Promise<void> {
  const probe = await ProtocolClient.connect(harness.relay.url);
  opened.push(probe);
  await probe.request({ op: 'subscribe', channel: 'markets', markets: ['active'] });
  await waitFor('the catalogue', () => {
    const state = probe.view('markets', 'active')?.state as Record<string, unknown> | undefined;
    return state !== undefined && check(state) ? true : undefined;
  });
}

describe('client SDK: subscribeAll', () => {
  const { opened, start } = useHarness();

  it('adds each active market, a new one later, removes an expired one; unsubscribe ends them all', async () => {
    const harness = await start({ sim: { markets: 3 } });
    const { client, errors } = connectRecorded(harness.relay.url);
    opened.push(client);
    const prices = client.subscribeAll('price');
    expect(client.subscribeAll('price')).toBe(prices);
    // A channel without wildcards is refused at the call, as the Python client refuses it.
    expect(() => client.subscribeAll('book' as 'price')).toThrow(
      new TypeError('a wildcard takes price, trades, market, not "book"'),
    );
    const added: string[] = [];
    const removed: { market: string; reason: string }[] = [];
    prices.on('added', ({ market, stream }) => {
      expect(stream.market).toBe(market);
      added.push(market);
    });
    prices.on('removed', ({ market, reason }) => removed.push({ market, reason }));

    const active = harness.sim.market.activeMarketIds();
    await waitFor('every active market added', () => (added.length === active.length ? true : undefined));
    expect(added.sort()).toEqual([...active].sort());
    for (const stream of prices.streams.values()) await waitFor('its price', () => stream.state);

    const market = harness.sim.market.addMarket().id;
    await waitFor('the new market added', () => prices.streams.get(market)?.state);
    expect(prices.streams.get(market)?.status).toBe('live');

    const expiring = active[0]!;
    const expiringStream = prices.streams.get(expiring)!;
    harness.sim.market.settle(expiring, 'EXPIRED');
    await waitFor('the expired market removed', () => (removed.length > 0 ? true : undefined));
    expect(removed).toEqual([{ market: expiring, reason: 'market no longer active' }]);
    expect(expiringStream.status).toBe('closed');
    expect(prices.streams.has(expiring)).toBe(false);

    const streams = [...prices.streams.values()];
    prices.unsubscribe();
    expect(streams.every((stream) => stream.status === 'closed')).toBe(true);
    const session = [...harness.relay.ws.connections][0]!.session;
    await waitFor('the relay left every stream', () => (session.streamCount === 0 ? true : undefined));
    expect(errors).toEqual([]);
  });

  it('the market channel: the stream closes itself, then the market is removed; close() ends the wildcards', async () => {
    const harness = await start({ sim: { markets: 2 } });
    const { client } = connectRecorded(harness.relay.url);
    opened.push(client);
    const records = client.subscribeAll('market');
    const removed: string[] = [];
    records.on('removed', ({ market }) => removed.push(market));
    const [resolving] = harness.sim.market.activeMarketIds();
    const stream = await waitFor('the record', () => records.streams.get(resolving!));
    await waitFor('its state', () => stream.state);
    harness.sim.market.settle(resolving!, 'RESOLVED');
    await waitFor('removed', () => (removed.includes(resolving!) ? true : undefined));
    expect(stream.status).toBe('closed');
    await client.close();
    expect(records.isClosed).toBe(true);
    expect(client.subscribeAll('trades').isClosed).toBe(true);
  });

  it('over SSE, next to a stream of the same channel named on its own', async () => {
    const harness = await start({ sim: { markets: 3 } });
    const { client, errors } = connectRecorded(harness.relay.url, { transport: 'sse' });
    opened.push(client);
    const [named, ...others] = harness.sim.market.activeMarketIds();
    const own = client.subscribePrice(named!);
    await waitFor('the named stream', () => own.state);
    const prices = client.subscribeAll('price');
    await waitFor('the others added', () =>
      others.every((market) => prices.streams.get(market)?.state) ? true : undefined,
    );
    expect(prices.streams.has(named!)).toBe(false);
    const market = harness.sim.market.addMarket().id;
    await waitFor('the new market', () => prices.streams.get(market)?.state);
    const removed: string[] = [];
    prices.on('removed', ({ market: gone }) => removed.push(gone));
    harness.sim.market.settle(others[0]!, 'RESOLVED');
    await waitFor('removed', () => (removed.includes(others[0]!) ? true : undefined));
    expect(own.status).toBe('live');
    expect(errors).toEqual([]);
  });

  it('over SSE, a stream unsubscribed on its own leaves the "*" response as it is, and may be named again', async () => {
    const harness = await start({ sim: { markets: 3 } });
    const { client, errors } = connectRecorded(harness.relay.url, { transport: 'sse' });
    opened.push(client);
    const prices = client.subscribeAll('price');
    const [left, kept] = harness.sim.market.activeMarketIds() as [string, string];
    await waitFor('both priced', () =>
      prices.streams.get(left)?.state && prices.streams.get(kept)?.state ? true : undefined,
    );
    let snapshots = 0;
    prices.streams.get(kept)!.on('snapshot', () => snapshots++);
    prices.streams.get(left)!.unsubscribe();
    expect(prices.streams.has(left)).toBe(false);
    // Named again: a response of its own; the "*" one is not reopened (nothing snapshots again).
    const own = client.subscribePrice(left);
    await waitFor('the named stream', () => own.state);
    await waitFor('two responses', () => (harness.relay.sse.connections.size === 2 ? true : undefined));
    expect(snapshots).toBe(0);
    expect(prices.streams.has(left)).toBe(false);
    expect(own.status).toBe('live');
    expect(errors).toEqual([]);
  });

  it('after a reconnect: markets still active keep their stream, one that left is removed, a new one added', async () => {
    const harness = await start({ sim: { markets: 3 } });
    const proxy = await RelayProxy.start(harness.relay.url);
    opened.push(proxy);
    const { client } = connectRecorded(proxy.url);
    opened.push(client);
    const prices = client.subscribeAll('price');
    const active = harness.sim.market.activeMarketIds();
    await waitFor('every market live', () =>
      prices.streams.size === active.length && [...prices.streams.values()].every((s) => s.state)
        ? true
        : undefined,
    );
    const before = new Map<string, PriceSubscription>(prices.streams);
    const removed: string[] = [];
    prices.on('removed', ({ market }) => removed.push(market));

    // The client hears nothing while upstream changes, then its connection drops.
    proxy.transform = () => undefined;
    const expiring = active[0]!;
    harness.sim.market.settle(expiring, 'EXPIRED');
    const market = harness.sim.market.addMarket().id;
    await catalogueShows(harness, opened, (state) => state[market] !== undefined && !(expiring in state));
    proxy.transform = (text) => text;
    proxy.links[0]!.client.terminate();

    await waitFor('the new market after the reconnect', () => prices.streams.get(market)?.state);
    await waitFor('the expired one removed', () => (removed.includes(expiring) ? true : undefined));
    for (const kept of active.slice(1)) {
      expect(prices.streams.get(kept)).toBe(before.get(kept));
      await waitFor(`${kept} live again`, () =>
        prices.streams.get(kept)?.status === 'live' ? true : undefined,
      );
    }
    expect(before.get(expiring)!.status).toBe('closed');
  });
});
