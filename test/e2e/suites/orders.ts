/**
 * End to end, `orders`: the orders a client rebuilds from snapshot + updates equal upstream's book
 * at the same moment, order by order (by id, with its side); and the book's one upstream request
 * serves both `book` and `orders` of a market, also when only `orders` is subscribed.
 */
import { describe, expect, it } from 'vitest';
import type {
  OrderEntry,
  OrderSide,
  OrdersData,
  OrdersUpdateData,
} from '../../../packages/protocol/src/protocol/messages.ts';
import type { SimulatorProfileName } from '../../../src/sim/profile.ts';
import { applyOrdersUpdate } from '../../support/channels/orders-state.ts';
import { type Message, ProtocolClient } from '../../support/clients/protocol-client.ts';
import { type Harness, upstreamBook, useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

const ROUNDS = 20;

/** A client's orders state for `market`: snapshot + every update, in seq order. */
function rebuiltOrders(
  client: ProtocolClient,
  market: string,
): { state: OrdersData; ts: string } | undefined {
  let rebuilt: { state: OrdersData; ts: string } | undefined;
  for (const message of client.messages) {
    if (message.channel !== 'orders' || message.market !== market) continue;
    if (message.type === 'snapshot')
      rebuilt = { state: message.data as OrdersData, ts: message.ts as string };
    else if (message.type === 'update' && rebuilt !== undefined)
      rebuilt = {
        state: applyOrdersUpdate(rebuilt.state, message.data as OrdersUpdateData),
        ts: message.ts as string,
      };
  }
  return rebuilt;
}

/** Orders by id with their side: what the protocol promises a client's state equals. */
function byId(orders: { bids: readonly OrderEntry[]; asks: readonly OrderEntry[] }) {
  const map = new Map<string, OrderEntry & { side: OrderSide }>();
  for (const order of orders.bids) map.set(order.id, { ...order, side: 'bid' });
  for (const order of orders.asks) map.set(order.id, { ...order, side: 'ask' });
  return map;
}

const orderBookRequests = (harness: Harness, market: string): number =>
  harness.sim.requests.filter(
    (request) => request.path === '/clob/orderbook' && request.query.market_id === market,
  ).length;

/** The suite under each of `profiles` (a part of the matrix: test/support/profile-matrix.ts). */
export function ordersSuite(profiles: readonly SimulatorProfileName[]): void {
  describe.each(profiles)('orders end to end (%s profile)', (profile) => {
    let harness: Harness;
    const { opened, start } = useHarness(profile);

    async function subscribe(channel: 'book' | 'orders', market: string): Promise<ProtocolClient> {
      const client = await ProtocolClient.connect(harness.relay.url);
      opened.push(client);
      expect(await client.request({ op: 'subscribe', channel, markets: [market] })).toMatchObject({
        type: 'subscribed',
        channel,
      });
      return client;
    }

    it("rebuilds upstream's orders by id after every poll, one order-book request serving book and orders", async () => {
      // Book polls every 100 ms: a busy test machine answers a poll within three intervals (no false stale).
      harness = await start({ sim: { markets: 4, tradeFlow: () => undefined }, relay: { bookPollMs: 100 } });
      const [both, bookOnly, ordersOnly] = harness.sim.market.activeMarketIds() as [string, string, string];
      const ordersClient = await subscribe('orders', both);
      await ordersClient.request({ op: 'subscribe', channel: 'orders', markets: [ordersOnly] });
      const bookClient = await subscribe('book', both);
      await bookClient.request({ op: 'subscribe', channel: 'book', markets: [bookOnly] });
      await waitFor('the orders snapshots', () =>
        [both, ordersOnly].every((market) => rebuiltOrders(ordersClient, market) !== undefined),
      );
      // One poll target per market, whatever mix of `book` and `orders` it streams.
      expect(harness.relay.poller.bookMarketCount).toBe(3);

      harness.sim.clearRequests();
      for (let round = 0; round < ROUNDS; round++) {
        harness.sim.tick();
        for (const market of [both, ordersOnly]) {
          const book = await upstreamBook(harness.sim, market);
          // Upstream stands still until the next tick: the client must reach exactly this state. (A
          // tick may change only the book's last price, so not every tick brings an orders update.)
          const expected = JSON.stringify([...byId(book)].sort());
          await waitFor(`round ${round}: orders of ${market}`, () => {
            const rebuilt = rebuiltOrders(ordersClient, market);
            return rebuilt !== undefined && JSON.stringify([...byId(rebuilt.state)].sort()) === expected;
          });
        }
        const book = await upstreamBook(harness.sim, both);
        const ts = new Date(book.timestamp).toISOString();
        await waitFor(
          `round ${round}: book of ${both} at ${ts}`,
          () => bookClient.view('book', both)?.ts === ts,
        );
      }
      expect(ordersClient.of('error')).toEqual([]);
      expect(bookClient.violations).toEqual([]);
      // The test read each of `both` and `ordersOnly` twice / once per round; the rest is the relay's.
      const relayPolls = {
        both: orderBookRequests(harness, both) - 2 * ROUNDS,
        bookOnly: orderBookRequests(harness, bookOnly),
        ordersOnly: orderBookRequests(harness, ordersOnly) - ROUNDS,
      };
      // Book and orders of one market cost what a book alone costs: one request per poll, not two.
      expect(relayPolls.both).toBeGreaterThanOrEqual(ROUNDS);
      expect(relayPolls.both).toBeLessThan(relayPolls.bookOnly * 1.5 + 5);
      expect(relayPolls.ordersOnly).toBeLessThan(relayPolls.bookOnly * 1.5 + 5);
      const updates = ordersClient.messages.filter((message: Message) => message.type === 'update');
      // Nearly every tick moves some order of both markets: the state was rebuilt from updates.
      expect(updates.length).toBeGreaterThanOrEqual(ROUNDS);
      for (const update of updates) expect(update).not.toHaveProperty('checksum');
    });
  });
}
