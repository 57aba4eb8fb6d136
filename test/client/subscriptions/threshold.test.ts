/**
 * The SDK's `{ threshold }` on a price stream (docs/client.md "Price thresholds"), against a relay
 * whose upstream prices the test sets: half-tick moves of the best bid reach the stream as whole
 * ticks and the final state, as conflated updates, no resync; `price.update` sets, changes and clears the
 * threshold in place, and `subscriptions()` shows it; a value the relay would refuse throws.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { PriceData } from '../../../packages/protocol/src/protocol/messages.ts';
import type { Relay } from '../../../src/relay-server.ts';
import { startSimulator } from '../../../src/sim/server.ts';
import { startHarnessRelay } from '../../support/harness.ts';
import { type ScriptedPrices, startScriptedPrices } from '../../support/upstream/scripted-prices.ts';
import { waitFor } from '../../support/wait-for.ts';
import { connectRecorded } from '../sdk-support.ts';

/** Best bid `halfTicks` half ticks of 0.01 above 0.50, the ask fixed, the midpoint between them. */
const prices = (halfTicks: number): PriceData => {
  const bid = 5_000 + halfTicks * 50; // in units of 0.0001
  const price = (units: number) => (units / 10_000).toFixed(8);
  return { best_bid: price(bid), best_ask: price(6_000), midpoint_price: price((bid + 6_000) / 2) };
};

describe('client SDK: threshold', () => {
  const opened: Array<{ close(): unknown }> = [];
  afterEach(async () => {
    for (const resource of opened.splice(0).reverse()) await resource.close();
  });

  async function start(): Promise<{ fake: ScriptedPrices; relay: Relay; market: string }> {
    const sim = await startSimulator({ markets: 2, seed: 3, tickMs: 0 });
    opened.push(sim);
    const [market] = sim.market.activeMarketIds();
    const fake = await startScriptedPrices(sim.url);
    opened.push(fake);
    fake.set(market!, prices(0));
    // Prices polled every 100 ms: the catch-up of a withheld half tick (ten polls) comes a second
    // later, long after the next step of the test.
    const relay = await startHarnessRelay(sim, { upstream: fake.url, pricePollMs: 100 });
    opened.push(relay);
    return { fake, relay, market: market! };
  }

  it('gets whole ticks and the final state as conflated updates; update and subscriptions() name the threshold', async () => {
    const { fake, relay, market } = await start();
    const { client, errors } = connectRecorded(relay.url, { encoding: 'json' });
    opened.push(client);
    const raw = client.subscribePrice(market);
    const gated = client.subscribePrice(market, { threshold: '0.01' });
    // One stream per market: the raw one is the same object, now gated.
    expect(gated).toBe(raw);
    expect(gated.threshold).toBe('0.01');
    const bids: string[] = [];
    const kinds: string[] = [];
    gated.on('snapshot', () => {
      kinds.push('snapshot');
      bids.push(gated.state?.best_bid ?? '');
    });
    gated.on('update', () => {
      kinds.push('update');
      bids.push(gated.state?.best_bid ?? '');
    });
    const resyncs: unknown[] = [];
    gated.on('resync', (reason) => resyncs.push(reason));
    const stream = await waitFor('the relay to hold the threshold', () => {
      const held = relay.registry.get({ channel: 'price', market });
      return [...(held?.subscribers ?? [])].some((s) => held?.subscribers.thresholdOf(s) === '0.01')
        ? held
        : undefined;
    });
    await waitFor('the first state', () => (gated.state?.best_bid === '0.50000000' ? true : undefined));
    const from = bids.length;
    for (let step = 1; step <= 3; step += 1) {
      fake.set(market, prices(step));
      await waitFor('the relay to take the move', () =>
        (stream.state as PriceData | undefined)?.best_bid === prices(step).best_bid ? true : undefined,
      );
    }
    await waitFor('the final state', () => (gated.state?.best_bid === prices(3).best_bid ? true : undefined));
    expect(bids.slice(from)).toEqual(['0.51000000', '0.51500000']);
    expect(kinds.slice(-2)).toEqual(['update', 'update']);

    const listed = async () => (await client.subscriptions()).subscriptions.map((entry) => entry.threshold);
    expect(await listed()).toEqual(['0.01']);
    await gated.update({ threshold: '0.05', interval: 500 });
    expect([gated.threshold, gated.interval]).toEqual(['0.05', 500]);
    expect(await listed()).toEqual(['0.05']);
    await gated.update({ threshold: null });
    expect(gated.threshold).toBeUndefined();
    expect(await listed()).toEqual([undefined]);
    expect(client.streams).toEqual([gated]);
    expect(resyncs).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('throws on a threshold the relay would refuse', async () => {
    const { relay, market } = await start();
    const { client } = connectRecorded(relay.url);
    opened.push(client);
    for (const threshold of ['0', '-0.01', '1.5', '0.000000001', '1e-2', 'abc', ''])
      expect(() => client.subscribePrice(market, { threshold })).toThrow(/threshold/);
    expect(() => client.subscribePrice(market, { threshold: 0.01 as unknown as string })).toThrow(
      /threshold/,
    );
    const price = client.subscribePrice(market);
    expect(() => price.update({ threshold: '2' })).toThrow(/threshold/);
    expect(() => price.update({ interval: 0 })).toThrow(/interval/);
  });
});
