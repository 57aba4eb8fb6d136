/**
 * `since` on every channel's `subscribe…` (docs/protocol.md "History and replay") against a
 * scripted relay: the time goes out on the subscribe, once per `since`; the `subscribed` reply's
 * `history` is on the stream before its snapshot; a `since` the relay would refuse throws first.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connect, type RelayClient } from '../../../packages/client/src/node.ts';
import { bookChecksum } from '../../../packages/protocol/src/protocol/book.ts';
import type { HistoryCoverage } from '../../../packages/protocol/src/protocol/history.ts';
import { waitFor } from '../../support/wait-for.ts';
import { FakeRelay, stamp } from '../fake-relay.ts';

const market = '3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f';
const since = '2026-03-02T13:00:00Z';

describe('since on every channel', () => {
  let relay: FakeRelay;
  let client: RelayClient;

  beforeEach(async () => {
    relay = await FakeRelay.start();
    client = connect(relay.url, { encoding: 'json' });
  });
  afterEach(async () => {
    await client.close();
    await relay.close();
  });

  it("sends each channel's since on its subscribe", async () => {
    const date = new Date(since);
    client.subscribeBook(market, { depth: 10, since });
    client.subscribePrice(market, { since: date });
    client.subscribeMarket(market, { since });
    client.subscribeOrders(market, { since });
    client.subscribeProbabilities({ since });
    client.subscribeMarkets({ status: 'active' }, { since });
    client.subscribeRest('/api/rewards/leaderboard?limit=25', { since });
    client.subscribeOracle(`0x${'ab'.repeat(32)}`, { since });
    for (const channel of [
      'book',
      'price',
      'market',
      'orders',
      'probabilities',
      'markets',
      'rest',
      'oracle',
    ]) {
      const request = await relay.subscribe(channel);
      expect(request.since, channel).toBe(channel === 'price' ? date.toISOString() : since);
    }
    // trades keeps its own bounds (and its activity_id form).
    const recent = new Date(Date.now() - 60_000);
    client.subscribeTrades(market, { since: recent });
    expect((await relay.subscribe('trades')).since).toBe(recent.toISOString());
  });

  it("puts the subscribed reply's history on the stream before its snapshot", async () => {
    const coverage: HistoryCoverage = { from: '2026-03-02T13:20:00.000Z', complete: false };
    relay.sinceCoverage = () => coverage;
    const book = client.subscribeBook(market, { since });
    let atSnapshot: HistoryCoverage | undefined;
    book.on('snapshot', () => {
      atSnapshot = book.history;
    });
    const request = await relay.subscribe('book');
    await waitFor('the history', () => book.history);
    expect(book.history).toEqual(coverage);
    const data = { bids: [['0.52000000', '150']], asks: [], last_price: '0.52000000' } as const;
    relay.send({
      type: 'snapshot',
      channel: 'book',
      market,
      depth: null,
      epoch: 'e1',
      seq: 1,
      ...stamp,
      data,
      checksum: bookChecksum({ bids: [['0.52000000', '150']], asks: [], last_price: '0.52000000' }),
    });
    await waitFor('the snapshot', () => book.status === 'live');
    expect(atSnapshot).toEqual(coverage);
    expect(request.since).toBe(since);
    // A stream subscribed without since has none.
    const price = client.subscribePrice(market);
    await relay.subscribe('price');
    expect(price.history).toBeUndefined();
  });

  it('throws on a since the relay would refuse, before sending', () => {
    for (const bad of ['2026-03-02 13:00', 'yesterday', new Date(Date.now() + 3_600_000)])
      expect(() => client.subscribeBook(market, { since: bad }), String(bad)).toThrow(/since/);
    expect(() => client.subscribeMarket(market, { since: 'an-activity-id' })).toThrow(/since/);
    expect(relay.requests).toEqual([]);
  });
});
