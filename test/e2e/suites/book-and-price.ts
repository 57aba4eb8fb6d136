/**
 * End to end: simulator + relay + several WebSocket clients. Every client's book, rebuilt from
 * snapshot + updates, must equal the book aggregated from the simulator's own `/clob/orderbook` at
 * the same moment, for every update over more than 30 polls; seq has no gap; checksums match;
 * markets nobody subscribes to get no upstream request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Channel } from '../../../packages/protocol/src/protocol/messages.ts';
import { priceDataOf } from '../../../src/relay/channels/price/codec.ts';
import type { SimulatorProfileName } from '../../../src/sim/profile.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import {
  expectedBook,
  type Harness,
  startHarness,
  upstreamBook,
  upstreamPrices,
} from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

const ROUNDS = 32;

/** The suite under each of `profiles` (a part of the matrix: test/support/profile-matrix.ts). */
export function bookAndPriceSuite(profiles: readonly SimulatorProfileName[]): void {
  describe.each(profiles)('relay end to end: book and price streams (%s profile)', (profile) => {
    let harness: Harness;
    let markets: string[];
    const clients: ProtocolClient[] = [];

    beforeAll(async () => {
      // Polls every 20 ms: at the default factor of 3 a first answer slower than 60 ms (a loaded CI
      // machine) would make a stream stale before its first state; freshness has its own tests.
      harness = await startHarness({
        sim: { markets: 8, profile },
        relay: { tuning: { staleAfterFactor: 50 } },
      });
      markets = harness.sim.market.marketIds();
    });
    afterAll(async () => {
      await Promise.all(clients.map((client) => client.close()));
      await harness.stop();
    });

    it('keeps every client equal to upstream, gap-free and checksummed, polling only subscribed markets', async () => {
      const [m0, m1, m2, m3] = markets as [string, string, string, string];
      // Subscriptions: [client, channel, market, depth]
      const plan: [number, Channel, string, 10 | 50 | null | undefined][] = [
        [0, 'book', m0, null],
        [0, 'book', m1, null],
        [0, 'price', m0, undefined],
        [0, 'price', m1, undefined],
        [1, 'book', m0, 10],
        [1, 'book', m1, 50],
        [1, 'book', m2, null],
        [2, 'book', m0, null],
        [2, 'price', m2, undefined],
        [2, 'price', m3, undefined],
      ];
      for (let i = 0; i < 3; i++) clients.push(await ProtocolClient.connect(harness.relay.url));
      harness.sim.clearRequests();
      for (const [client, channel, market, depth] of plan) {
        const reply = await clients[client]!.request({
          op: 'subscribe',
          channel,
          markets: [market],
          ...(depth === undefined ? {} : { depth }),
        });
        expect(reply).toMatchObject({ type: 'subscribed', channel, markets: [market] });
      }
      await waitFor('a snapshot on every stream', () =>
        plan.every(
          ([client, channel, market, depth]) => clients[client]!.view(channel, market, depth) !== undefined,
        ),
      );

      const bookMarkets = [m0, m1, m2];
      const priceMarkets = [m0, m1, m2, m3];
      for (let round = 0; round < ROUNDS; round++) {
        harness.sim.tick();
        const books = new Map(
          await Promise.all(bookMarkets.map(async (m) => [m, await upstreamBook(harness.sim, m)] as const)),
        );
        const prices = new Map(
          (await upstreamPrices(harness.sim, priceMarkets)).map((entry) => [entry.market_id, entry]),
        );
        for (const [client, channel, market, depth] of plan) {
          const view = () => clients[client]!.view(channel, market, depth)!;
          if (channel === 'book') {
            const book = books.get(market)!;
            const expected = expectedBook(book, depth ?? null);
            if (depth === null) {
              // A full book changes on every tick: wait for the update of exactly this upstream state
              // (its time alone may not tell: a profile writes whole seconds).
              const ts = new Date(book.timestamp).toISOString();
              await waitFor(`round ${round}: ${market} full book at ${ts}`, () =>
                view().ts === ts && JSON.stringify(view().state) === JSON.stringify(expected)
                  ? true
                  : undefined,
              );
              expect(view().state, `round ${round}, client ${client}, ${market}`).toEqual(expected);
            } else {
              // A depth window may not change when only deeper levels do.
              await waitFor(`round ${round}: ${market} depth ${depth}`, () =>
                JSON.stringify(view().state) === JSON.stringify(expected) ? true : undefined,
              );
            }
          } else {
            const expected = priceDataOf(prices.get(market)!);
            await waitFor(`round ${round}: price of ${market}`, () =>
              JSON.stringify(view().state) === JSON.stringify(expected) ? true : undefined,
            );
          }
        }
      }

      for (const [i, client] of clients.entries()) {
        expect(client.violations, `client ${i}`).toEqual([]);
        expect(client.of('error'), `client ${i}`).toEqual([]);
      }
      // Every full-book stream saw an update for (nearly) every poll round, each verified above.
      for (const [client, channel, market, depth] of plan) {
        if (channel === 'book' && depth === null) {
          expect(clients[client]!.view(channel, market, depth)!.updates).toBeGreaterThanOrEqual(ROUNDS - 1);
        }
      }

      // Upstream load: order books only of book-subscribed markets, prices only of price-subscribed ones.
      const relayRequests = harness.sim.requests;
      const booksPolled = new Set(
        relayRequests.filter((r) => r.path === '/clob/orderbook').map((r) => r.query.market_id),
      );
      expect([...booksPolled].sort()).toEqual([...bookMarkets].sort());
      const pricesPolled = new Set(
        relayRequests
          .filter((r) => r.path === '/clob/market-prices/batch')
          .flatMap((r) => (r.body as { market_ids: string[] }).market_ids),
      );
      expect([...pricesPolled].sort()).toEqual([...priceMarkets].sort());
      for (const unsubscribed of markets.slice(4)) {
        expect(
          relayRequests.some((r) => JSON.stringify(r).includes(unsubscribed)),
          unsubscribed,
        ).toBe(false);
      }
    });

    it('polls a market once per interval however many clients subscribe to it', async () => {
      const market = markets[5]!;
      const subscribers = await Promise.all(
        Array.from({ length: 6 }, () => ProtocolClient.connect(harness.relay.url)),
      );
      clients.push(...subscribers);
      for (const client of subscribers)
        await client.request({ op: 'subscribe', channel: 'book', markets: [market] });
      await waitFor('snapshots', () => subscribers.every((client) => client.view('book', market)));
      harness.sim.clearRequests();
      for (let round = 0; round < 5; round++) {
        harness.sim.tick();
        const ts = new Date((await upstreamBook(harness.sim, market)).timestamp).toISOString();
        await waitFor(`all six clients at ${ts}`, () =>
          subscribers.every((client) => client.view('book', market)!.ts === ts),
        );
      }
      const polls = harness.sim.requests.filter(
        (r) => r.path === '/clob/orderbook' && r.query.market_id === market,
      );
      // Six clients, one poll loop: never two polls in flight, so never more than one request per round trip.
      const relayPolls = polls.length - 5; // the test's own five reads
      const elapsedMs = harness.sim.requests.at(-1)!.at - harness.sim.requests[0]!.at;
      expect(relayPolls).toBeLessThanOrEqual(
        Math.ceil(elapsedMs / harness.relay.poller.intervals.bookIntervalMs) + 2,
      );
    });
  });
}
