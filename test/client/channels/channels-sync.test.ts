/**
 * The SDK's streams of the channels after `book` and `price` against a real relay and simulator
 * (docs/client.md): at each moment the state a subscription keeps equals upstream's own view, over
 * the WebSocket and over SSE; every trade is announced exactly once across activity pages and a
 * relay restart; a
 * market that leaves ACTIVE is announced as `closed`, then its stream ends.
 */
import { describe, expect, it } from 'vitest';
import type { RelayClient } from '../../../packages/client/src/node.ts';
import { type Harness, startHarnessRelay, useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';
import { connectRecorded, type RecordedClient } from '../sdk-support.ts';
import {
  type ChannelSubscriptions,
  expectChannelsEqualUpstream,
  upstreamMarket,
  upstreamTrades,
} from './channel-upstream.ts';

describe('client SDK: trades, market, probabilities, oracle and orders stay equal to upstream', () => {
  let harness: Harness;
  const { opened, start } = useHarness();
  /** The simulator's clock: each step moves it past a second, so oracle publish times advance. */
  let clock = Date.now();

  async function startWithClock(markets = 3): Promise<Harness> {
    clock = Date.now();
    // Stale only after 50 poll intervals: a loaded machine must not turn a slow first poll into an error.
    harness = await start({
      sim: { markets, now: () => clock },
      relay: { tuning: { staleAfterFactor: 50 } },
    });
    return harness;
  }

  function sdk(options: Parameters<typeof connectRecorded>[1] = {}): RecordedClient {
    const recorded = connectRecorded(harness.relay.url, options);
    opened.push(recorded.client);
    return recorded;
  }

  async function subscribeAll(client: RelayClient, market: string): Promise<ChannelSubscriptions> {
    const feedId = (await upstreamMarket(harness.sim, market)).oracle_feed_id;
    if (typeof feedId !== 'string') throw new Error(`market ${market} has no oracle feed`);
    return {
      trades: client.subscribeTrades(market),
      market: client.subscribeMarket(market),
      probabilities: client.subscribeProbabilities(),
      oracle: client.subscribeOracle(feedId),
      orders: client.subscribeOrders(market),
    };
  }

  function step(): void {
    clock += 1_500;
    harness.sim.tick();
  }

  for (const transport of ['websocket', 'sse'] as const) {
    it(`keeps every channel's state equal to upstream's over ticks (${transport})`, async () => {
      await startWithClock();
      const [market] = harness.sim.market.marketIds() as [string];
      const { client, errors } = sdk(transport === 'sse' ? { transport: 'sse' } : {});
      const streams = await subscribeAll(client, market);
      const announced: string[] = [];
      streams.trades.on('trade', ({ activity_id }) => announced.push(activity_id));
      let updates = 0;
      for (const stream of Object.values(streams)) stream.on('update', () => updates++);

      await expectChannelsEqualUpstream(harness.sim, streams);
      for (let round = 0; round < 3; round++) {
        step();
        await expectChannelsEqualUpstream(harness.sim, streams);
      }
      expect(updates).toBeGreaterThan(0);
      expect(new Set(announced).size).toBe(announced.length);
      for (const trade of await upstreamTrades(harness.sim, market))
        expect(announced).toContain(trade.activity_id);
      expect(Object.values(streams).every((stream) => stream.status === 'live')).toBe(true);
      expect(errors).toEqual([]);
    });
  }

  it('announces every trade exactly once across activity pages and a relay restart (a new epoch repeating some)', async () => {
    // Only the test's own trades, in bursts of more than one activity page (100).
    harness = await start({
      sim: { markets: 3, tradeFlow: () => undefined },
      relay: { tuning: { staleAfterFactor: 50 } },
    });
    const market = harness.sim.market.activeMarketIds()[0]!;
    const log = () => harness.sim.market.market(market)!.trades.map((trade) => trade.id);
    const { client, closes } = sdk();
    const trades = client.subscribeTrades(market);
    const announced: string[] = [];
    trades.on('trade', ({ activity_id }) => announced.push(activity_id));
    await waitFor('the first snapshot', () => trades.state !== undefined);
    const firstAnnounced = log().length - (trades.state?.length ?? 0);
    const caughtUp = () => waitFor('the newest trade', () => announced.includes(log().at(-1)!));

    harness.sim.market.printTrades(market, 120);
    await caughtUp();
    const epochBefore = trades.epoch;
    const port = Number(new URL(harness.relay.url).port);
    await harness.relay.close();
    await waitFor('the SDK to see the 1001 close', () => closes.includes(1001));
    // Fewer trades than a snapshot holds while no relay runs: the new snapshot repeats 20 announced ones.
    harness.sim.market.printTrades(market, 30);
    const restarted = await startHarnessRelay(harness.sim, { port, tuning: { staleAfterFactor: 50 } });
    opened.push(restarted);
    await waitFor('the new epoch', () => trades.epoch !== undefined && trades.epoch !== epochBefore);
    harness.sim.market.printTrades(market, 170);
    await caughtUp();

    expect(announced).toEqual(log().slice(firstAnnounced));
    expect(trades.state).toEqual(await upstreamTrades(harness.sim, market));
  });

  it('announces a market leaving ACTIVE (expired at its time, or resolved), then the stream ends', async () => {
    await startWithClock();
    const [expiring, resolving] = harness.sim.market.marketIds() as [string, string];
    const { client } = sdk();
    const records = [client.subscribeMarket(expiring), client.subscribeMarket(resolving)];
    const closed: string[][] = [[], []];
    for (const [i, record] of records.entries()) record.on('closed', ({ status }) => closed[i]!.push(status));
    await waitFor('the records', () => records.every((record) => record.state?.status === 'ACTIVE'));

    // Past the first market's expiry: the next step expires it upstream. The second one resolves now.
    clock = Math.max(clock, Date.parse(String(records[0]!.state?.expiration_timestamp))) + 1_000;
    harness.sim.tick();
    harness.sim.market.settle(resolving, 'RESOLVED');
    await waitFor('both streams to close', () => records.every((record) => record.status === 'closed'));
    expect(closed).toEqual([['EXPIRED'], ['RESOLVED']]);
    for (const [i, market] of [expiring, resolving].entries()) {
      // The update that said so was applied before the stream ended: the record is upstream's.
      expect(records[i]!.state).toEqual(await upstreamMarket(harness.sim, market));
    }
    expect(client.streams).toEqual([]);
  });
});
