/**
 * `threshold` on a `price` subscription over WebSocket and SSE (docs/protocol.md "Per-subscription
 * options"), against a fake upstream whose prices the test sets: a best bid moving by half ticks
 * reaches a subscriber of a one-tick threshold only as the moves that add up to a tick, and the
 * final state as the catch-up, the tenth price poll after it; bad thresholds are refused with the id and change nothing;
 * `list` shows the threshold and `update` sets, changes and clears it in place.
 */

import { afterEach, describe, expect, it } from 'vitest';
import type { RawData } from 'ws';
import { THRESHOLD_CATCH_UP_POLLS as CATCH_UP } from '../../packages/protocol/src/protocol/limits.ts';
import type { PriceData } from '../../packages/protocol/src/protocol/messages.ts';
import type { Relay } from '../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../src/sim/server.ts';
import { appliesTo } from '../support/clients/message-recorder.ts';
import { type Message, ProtocolClient } from '../support/clients/protocol-client.ts';
import { SseClient } from '../support/clients/sse-client.ts';
import { startHarnessRelay } from '../support/harness.ts';
import { type ScriptedPrices, startScriptedPrices } from '../support/upstream/scripted-prices.ts';
import { waitFor } from '../support/wait-for.ts';

/** Best bid `halfTicks` half ticks of 0.01 above 0.50, the ask fixed, the midpoint between them. */
const prices = (halfTicks: number): PriceData => {
  const bid = 5_000 + halfTicks * 50; // in units of 0.0001
  const price = (units: number) => (units / 10_000).toFixed(8);
  return { best_bid: price(bid), best_ask: price(6_000), midpoint_price: price((bid + 6_000) / 2) };
};

interface Timed {
  /** The price polls the fake upstream had answered when the message arrived. */
  polls: number;
  message: Message;
}

describe('price threshold', () => {
  const opened: Array<{ close(): unknown }> = [];
  afterEach(async () => {
    for (const resource of opened.splice(0).reverse()) await resource.close();
  });

  async function start(): Promise<{ fake: ScriptedPrices; relay: Relay; market: string }> {
    const sim: SimulatorHandle = await startSimulator({ markets: 2, seed: 3, tickMs: 0 });
    opened.push(sim);
    const [market] = sim.market.activeMarketIds();
    const fake = await startScriptedPrices(sim.url);
    opened.push(fake);
    fake.set(market!, prices(0));
    // Prices polled every 100 ms: a catch-up ten polls after a change leaves a step of the test
    // (a poll and a message) a second before it could come.
    const relay = await startHarnessRelay(sim, { upstream: fake.url, pricePollMs: 100 });
    opened.push(relay);
    return { fake, relay, market: market! };
  }

  async function connect(
    relay: Relay,
    fake?: ScriptedPrices,
  ): Promise<{ client: ProtocolClient; timed: Timed[] }> {
    const client = await ProtocolClient.connect(relay.url);
    opened.push(client);
    const timed: Timed[] = [];
    client.ws.on('message', (data: RawData) => {
      const message = JSON.parse(data.toString()) as Message;
      if (message.type === 'snapshot' || message.type === 'update')
        timed.push({ polls: fake?.batches ?? 0, message });
    });
    return { client, timed };
  }

  const bid = (client: ProtocolClient, market: string) =>
    (client.view('price', market)?.state as PriceData | undefined)?.best_bid;

  it('sends the half-tick moves that add up to a tick, and the final state as the catch-up', async () => {
    const { fake, relay, market } = await start();
    const raw = await connect(relay, fake);
    const gated = await connect(relay, fake);
    await raw.client.request({ op: 'subscribe', channel: 'price', markets: [market] });
    const answer = await gated.client.request({
      op: 'subscribe',
      channel: 'price',
      markets: [market],
      threshold: '0.01',
    });
    expect(answer).toMatchObject({ type: 'subscribed', threshold: '0.01' });
    for (const { client } of [raw, gated])
      await waitFor('the first snapshot', () => (bid(client, market) === '0.50000000' ? true : undefined));
    // Each step waits for the raw subscriber to hold the new bid: the relay took it.
    const steps: number[] = [];
    for (let step = 1; step <= 5; step += 1) {
      const began = fake.batches;
      fake.set(market, prices(step));
      const expected = prices(step).best_bid;
      await waitFor(`the raw subscriber at ${expected}`, () =>
        bid(raw.client, market) === expected ? true : undefined,
      );
      steps.push(fake.batches - began);
    }
    const final = prices(5).best_bid;
    await waitFor('the final state', () => (bid(gated.client, market) === final ? true : undefined));
    const bids = gated.timed.map(({ message }) => (message.data as PriceData).best_bid);
    // Each step took far fewer polls than the catch-up, so only whole ticks went out before the final state.
    expect(bids, `steps took ${steps.join(', ')} polls`).toEqual([
      '0.50000000',
      '0.51000000',
      '0.52000000',
      '0.52500000',
    ]);
    // After the first, each message is the change from the one before it (`prev_seq`, or the seq before its own).
    const gatedSeqs = gated.timed.map(({ message }) => message.seq);
    expect(gated.timed.slice(1).map(({ message }) => appliesTo(message))).toEqual(gatedSeqs.slice(0, -1));
    expect(raw.timed.filter(({ message }) => message.type === 'update')).toHaveLength(5);
    // The final state came as the catch-up: CATCH_UP polls after the poll that brought it (which
    // the raw subscriber got at once; a poll more or less for the moments the two were counted).
    const tookFinal = raw.timed.at(-1)!.polls;
    expect(gated.timed.at(-1)!.polls - tookFinal).toBeGreaterThanOrEqual(CATCH_UP - 1);
    for (const { client } of [raw, gated]) expect(client.violations).toEqual([]);
  });

  it('refuses bad thresholds with the id and changes nothing', async () => {
    const { relay, market } = await start();
    const { client } = await connect(relay);
    await client.request({ op: 'subscribe', channel: 'price', markets: [market], threshold: '0.05' });
    await client.request({ op: 'subscribe', channel: 'book', markets: [market], depth: 10 });
    await waitFor('the price snapshot', () => client.view('price', market));
    await waitFor('the book snapshot', () => client.view('book', market, 10));
    const before = await client.request({ op: 'list' });
    const bad: [Record<string, unknown>, RegExp][] = [
      ...[0.01, '0', '0.000', '-0.01', '1.00000001', '2', '0.000000001', '1e-2', '.5', '0x1', '', null].map(
        (threshold): [Record<string, unknown>, RegExp] => [
          { op: 'subscribe', channel: 'price', markets: [market], threshold },
          /threshold.*decimal string above 0 and at most "1", with at most 8 decimal places/,
        ],
      ),
      [{ op: 'subscribe', channel: 'book', markets: [market], threshold: '0.01' }, /price channel only/],
      [{ op: 'subscribe', channel: 'trades', markets: [market], threshold: '0.01' }, /price channel only/],
      [{ op: 'subscribe', channel: 'price', markets: ['*'], threshold: '0.01' }, /threshold.*not "\*"/],
      [{ op: 'update', channel: 'price', markets: [market], threshold: '0' }, /threshold/],
      [{ op: 'update', channel: 'book', markets: [market], threshold: '0.01' }, /price channel only/],
      [{ op: 'update', channel: 'price', markets: [market] }, /name the new "interval" or "threshold"/],
    ];
    // Each answer is the one carrying the request's id (ProtocolClient.request waits for it).
    for (const [request, message] of bad) {
      const answer = await client.request(request);
      expect(answer, JSON.stringify(request)).toMatchObject({ type: 'error', code: 'bad_request' });
      expect(answer.message).toMatch(message);
    }
    expect(await client.request({ op: 'list' })).toMatchObject({ subscriptions: before.subscriptions });
    expect(client.violations).toEqual([]);
  });

  it('lists the threshold, and update sets, changes and clears it in place', async () => {
    const { relay, market } = await start();
    const { client } = await connect(relay);
    await client.request({ op: 'subscribe', channel: 'price', markets: [market], threshold: '0.010' });
    const listed = async () =>
      ((await client.request({ op: 'list' })).subscriptions as Message[]).map(({ interval, threshold }) => ({
        interval,
        threshold,
      }));
    // One spelling per value: "0.010" is "0.01".
    expect(await listed()).toEqual([{ interval: undefined, threshold: '0.01' }]);
    const stream = relay.registry.get({ channel: 'price', market })!;
    const answer = await client.request({ op: 'update', channel: 'price', markets: [market], interval: 500 });
    // Every option in force: the threshold the update left as it was, too.
    expect(answer).toMatchObject({ type: 'subscribed', interval: 500, threshold: '0.01' });
    expect(await listed()).toEqual([{ interval: 500, threshold: '0.01' }]);
    const changed = await client.request({
      op: 'update',
      channel: 'price',
      markets: [market],
      threshold: '0.25',
    });
    expect(changed).toMatchObject({ type: 'subscribed', threshold: '0.25' });
    expect(await listed()).toEqual([{ interval: 500, threshold: '0.25' }]);
    await client.request({ op: 'update', channel: 'price', markets: [market], threshold: null });
    expect(await listed()).toEqual([{ interval: 500, threshold: undefined }]);
    // The same stream throughout: no second subscription.
    expect(relay.registry.get({ channel: 'price', market })).toBe(stream);
    expect(client.violations).toEqual([]);
  });

  it('takes threshold as an SSE query parameter, and refuses a bad one with 400', async () => {
    const { fake, relay, market } = await start();
    const sse = await SseClient.connect(`${relay.url}/v1/sse?channel=price&markets=${market}&threshold=0.01`);
    opened.push(sse);
    expect(sse.status).toBe(200);
    await waitFor('the first snapshot', () => sse.view('price', market));
    expect(sse.messages[0]).toMatchObject({ type: 'subscribed', threshold: '0.01' });
    const stream = relay.registry.get({ channel: 'price', market })!;
    fake.set(market, prices(1));
    await waitFor('the relay to take half a tick', () =>
      (stream.state as PriceData | undefined)?.best_bid === prices(1).best_bid ? true : undefined,
    );
    fake.set(market, prices(2));
    await waitFor('the tick', () =>
      (sse.view('price', market)?.state as PriceData | undefined)?.best_bid === prices(2).best_bid
        ? true
        : undefined,
    );
    // The tick came as the change from the first state the reader was sent, naming its seq.
    expect(sse.of('update').map(appliesTo)).toEqual([sse.of('snapshot')[0]!.seq]);
    for (const query of [
      `channel=price&markets=${market}&threshold=0`,
      `channel=price&markets=${market}&threshold=abc`,
      `channel=price&markets=${market}&threshold=`,
      `channel=book&markets=${market}&threshold=0.01`,
    ]) {
      const response = await fetch(`${relay.url}/v1/sse?${query}`);
      expect(response.status, query).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'bad_request' });
    }
    expect(sse.violations).toEqual([]);
  });
});
