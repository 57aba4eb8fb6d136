/**
 * End to end, `trades` with `since` (docs/protocol.md "History since a time"), against a profile
 * listing activity newest first and one listing it oldest first with small pages: a subscription
 * `since` 30 minutes back receives every trade upstream's own activity pages list in those 30
 * minutes, each `activity_id` once, oldest first, and then the live ones, none missing at the seam,
 * also with trades arriving while the history is read. `since` an `activity_id` starts after it;
 * concurrent subscribers of the same `since` share one read; a bad `since` is refused with the
 * request's id and nothing else on the connection changes; SSE takes `since` in its query.
 */
import { describe, expect, it } from 'vitest';
import { COMPACT_SUBPROTOCOL } from '../../../packages/protocol/src/protocol/compact.ts';
import { entriesOf, tradeMessages, upstreamListing } from '../../support/channels/trades.ts';
import { ids } from '../../support/channels/trades-listing.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { SseClient } from '../../support/clients/sse-client.ts';
import { type Harness, useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

const MINUTE = 60_000;
const setup = { sim: { markets: 6, tradeFlow: () => undefined }, relay: { pricePollMs: 100 } };

/** A market whose trades reach back past 30 minutes and also fall within them (seeded past trades). */
function marketAcrossHalfHour(harness: Harness): string {
  const since = Date.now() - 30 * MINUTE;
  const market = harness.sim.market.activeMarketIds().find((id) => {
    const trades = harness.sim.market.market(id)!.trades;
    return trades.some((t) => t.at < since) && trades.some((t) => t.at >= since);
  });
  if (market === undefined) throw new Error('no seeded market has trades on both sides of 30 minutes back');
  return market;
}

describe.each(['default', 'terse'] as const)('trades since (%s profile)', (profile) => {
  const { opened, start } = useHarness(profile);

  async function connect(harness: Harness, protocols: string[] = []): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(harness.relay.url, {}, protocols);
    opened.push(client);
    return client;
  }

  it('since 30 minutes back: every trade upstream lists since then, each once, oldest first, then the live ones with none missing at the seam', async () => {
    const harness = await start(setup);
    const market = marketAcrossHalfHour(harness);
    // Several pages of history (the terse profile serves 25 a page).
    harness.sim.market.printTrades(market, 300);
    const since = new Date(Date.now() - 30 * MINUTE).toISOString();
    // One JSON connection, one compact (the merged snapshot has its compact form too).
    const [a, b] = [await connect(harness), await connect(harness, [COMPACT_SUBPROTOCOL])];
    const subscribe = { op: 'subscribe', channel: 'trades', markets: [market], since };
    const answers = await Promise.all([a.request(subscribe), b.request(subscribe)]);
    for (const answer of answers) expect(answer).toMatchObject({ type: 'subscribed', since });
    // Trades keep arriving while the history is read (at most 200: the simulator keeps 1,000, and a
    // poll reads at most 500 new ones), then a few live ones after the snapshots.
    let printing = true;
    const printer = (async () => {
      for (let round = 0; printing && round < 60; round++) {
        harness.sim.market.printTrades(market, 3);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    for (const client of [a, b])
      await waitFor('the since snapshot', () => tradeMessages(client, market).length > 0);
    printing = false;
    await printer;
    for (let round = 0; round < 3; round++) {
      harness.sim.market.printTrades(market, 5);
      const newest = harness.sim.market.market(market)!.trades.at(-1)!.id;
      for (const client of [a, b])
        await waitFor(`the live trade ${newest}`, () =>
          ids(entriesOf(tradeMessages(client, market))).includes(newest),
        );
    }
    const listing = await upstreamListing(harness.sim, market);
    const newest = listing.at(-1)!.activity_id;
    for (const client of [a, b]) {
      await waitFor(`the client to receive ${newest}`, () =>
        ids(entriesOf(tradeMessages(client, market))).includes(newest),
      );
      const messages = tradeMessages(client, market);
      expect(messages[0]!.type).toBe('snapshot');
      expect(messages.slice(1).every((m) => m.type === 'update')).toBe(true);
      const seqs = messages.map((m) => m.seq as number);
      expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
      const expected = ids(
        listing.filter((entry) => Date.parse(entry.activity_timestamp) >= Date.parse(since)),
      );
      expect(ids(entriesOf(messages))).toEqual(expected);
      // The seeded trades before `since` stay out; those after it are in, beyond one snapshot's 50.
      expect(expected.length).toBeGreaterThan(300);
      expect(listing.length).toBeGreaterThan(expected.length);
      expect(client.of('error')).toEqual([]);
      expect(client.violations).toEqual([]);
    }
    expect(b.compactMessages).toBe(tradeMessages(b, market).length);
    // The two subscribers asked the same since at once: one read.
    expect(harness.relay.sinceReads.started).toBe(1);
  });

  it('since an activity_id: the trades after it; an unknown id is an error with the id, and the subscription is left', async () => {
    const harness = await start(setup);
    const market = marketAcrossHalfHour(harness);
    const listing = await upstreamListing(harness.sim, market);
    const named = listing[Math.floor(listing.length / 2)]!.activity_id;
    const client = await connect(harness);
    await client.request({ op: 'subscribe', channel: 'trades', markets: [market], since: named });
    await waitFor('the since snapshot', () => tradeMessages(client, market).length > 0);
    expect(ids(entriesOf(tradeMessages(client, market)))).toEqual(
      ids(listing.slice(listing.findIndex((entry) => entry.activity_id === named) + 1)),
    );
    const other = harness.sim.market.activeMarketIds().find((id) => id !== market)!;
    const answer = await client.request({
      op: 'subscribe',
      channel: 'trades',
      markets: [other],
      since: 'no-such-trade',
    });
    expect(answer).toMatchObject({ type: 'subscribed' });
    const error = await waitFor('the not-found error', () =>
      client.of('error').find((m) => m.market === other),
    );
    expect(error).toMatchObject({ id: answer.id, code: 'bad_request', channel: 'trades', market: other });
    const list = await client.request({ op: 'list' });
    expect((list.subscriptions as { market: string }[]).map((s) => s.market)).toEqual([market]);
  });

  it('refuses a since in the future, past 24 hours, malformed, beside resume or off trades, with the id; nothing else changes', async () => {
    const harness = await start(setup);
    const market = harness.sim.market.activeMarketIds()[0]!;
    const client = await connect(harness);
    await client.request({ op: 'subscribe', channel: 'trades', markets: [market] });
    await waitFor('the snapshot', () => tradeMessages(client, market).length > 0);
    const before = await client.request({ op: 'list' });
    const messagesBefore = client.messages.length;
    const refused = [
      { channel: 'trades', since: new Date(Date.now() + MINUTE).toISOString() },
      { channel: 'trades', since: new Date(Date.now() - 25 * 60 * MINUTE).toISOString() },
      { channel: 'trades', since: '2025-06-01T12:00' },
      { channel: 'trades', since: 42 },
      { channel: 'trades', since: new Date().toISOString(), resume: { [market]: { epoch: 'x', seq: 1 } } },
      { channel: 'price', since: new Date().toISOString() },
      { channel: 'trades', markets: ['*'], since: new Date().toISOString() },
    ];
    for (const request of refused) {
      const answer = await client.request({ op: 'subscribe', markets: [market], ...request });
      expect(answer).toMatchObject({ type: 'error', code: 'bad_request' });
      expect(String(answer.message)).toMatch(/since/);
    }
    // Only the refusals and the list's answer arrived; the list is as it was.
    const after = await client.request({ op: 'list' });
    expect(
      client.messages.slice(messagesBefore).every((m) => m.type === 'error' || m.type === 'subscriptions'),
    ).toBe(true);
    expect(after.subscriptions).toEqual(before.subscriptions);
  });

  it('takes since as an SSE query parameter, and refuses a bad one with 400', async () => {
    const harness = await start(setup);
    const market = marketAcrossHalfHour(harness);
    const since = new Date(Date.now() - 30 * MINUTE).toISOString();
    const query = (value: string) =>
      `${harness.relay.url}/v1/sse?channel=trades&markets=${market}&since=${encodeURIComponent(value)}`;
    const client = await SseClient.connect(query(since));
    opened.push(client);
    const snapshot = await waitFor('the since snapshot', () =>
      client.messages.find((m) => m.type === 'snapshot' && m.channel === 'trades'),
    );
    const listing = await upstreamListing(harness.sim, market);
    const expected = ids(
      listing.filter((entry) => Date.parse(entry.activity_timestamp) >= Date.parse(since)),
    );
    expect(ids(entriesOf([snapshot]))).toEqual(expected);
    const refused = await SseClient.connect(query(new Date(Date.now() + MINUTE).toISOString()));
    opened.push(refused);
    expect(refused.status).toBe(400);
  });
});
