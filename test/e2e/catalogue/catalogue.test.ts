/**
 * The `markets` channel (protocol.md "`markets` data"): upstream's whole catalogue as one stream,
 * however few markets upstream serves a page (every simulator profile); a market the simulator
 * adds, one it expires and one it resolves (on a later page) reach every subscriber once, in
 * order, as whole records (upstream's types), and a filtered stream drops a market that leaves it.
 */
import { describe, expect, it } from 'vitest';
import type {
  MarketListRecord,
  MarketsUpdateData,
} from '../../../packages/protocol/src/protocol/messages.ts';
import { simulatorProfileNames } from '../../../src/sim/profile.ts';
import { connectRecorded } from '../../client/sdk-support.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { type Harness, useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

/** Upstream's list, every page of it, each asked where the markets served so far end. */
async function upstreamList(harness: Harness, filter: string): Promise<MarketListRecord[]> {
  const markets: MarketListRecord[] = [];
  for (let more = true; more; ) {
    const response = await fetch(
      `${harness.sim.url}/api/markets?limit=100&offset=${markets.length}&${filter}`,
    );
    const body = (await response.json()) as { markets: MarketListRecord[]; pagination: { hasMore: boolean } };
    markets.push(...body.markets);
    more = body.pagination.hasMore && body.markets.length > 0;
  }
  return markets;
}

async function upstreamCatalogue(
  harness: Harness,
  filter = 'statusFilter=all',
): Promise<Record<string, unknown>> {
  const markets = await upstreamList(harness, filter);
  return Object.fromEntries(markets.map((record) => [String(record.market_id), record]));
}

describe.each(simulatorProfileNames)('markets channel (%s profile)', (profile) => {
  const { opened, start } = useHarness(profile);

  it('streams the whole catalogue; a new, an expired and a resolved market once each, in order', async () => {
    // More markets than upstream serves a page under every profile but `default`.
    const harness = await start({ sim: { markets: 45 } });
    const { client } = connectRecorded(harness.relay.url);
    opened.push({ close: async () => client.close() });
    const raws = await Promise.all([
      ProtocolClient.connect(harness.relay.url),
      ProtocolClient.connect(harness.relay.url),
    ]);
    opened.push(...raws);
    for (const raw of raws) await raw.request({ op: 'subscribe', channel: 'markets', markets: ['all'] });

    const records = await client.markets();
    expect(Object.fromEntries(records.map((r) => [r.market_id, r]))).toEqual(
      await upstreamCatalogue(harness),
    );
    const catalogue = client.subscribeMarkets();
    const listed: string[] = [];
    catalogue.on('listed', (record) => listed.push(String(record.market_id)));

    expect(records).toHaveLength(45);
    const added = harness.sim.market.addMarket().id;
    await waitFor('the new market', () => (catalogue.state?.[added] !== undefined ? true : undefined));
    // Two markets past the first 20 the relay's pages (newest first) can hold.
    const newest = (await upstreamList(harness, 'statusFilter=all&sortBy=newest')).map((r) => r.market_id);
    const [expiring, resolving] = harness.sim.market
      .activeMarketIds()
      .filter((id) => newest.indexOf(id) >= 20);
    harness.sim.market.settle(expiring!, 'EXPIRED');
    await waitFor('the expiry', () =>
      catalogue.state?.[expiring!]?.status === 'EXPIRED' ? true : undefined,
    );
    harness.sim.market.settle(resolving!, 'RESOLVED');
    await waitFor('the resolution', () =>
      catalogue.state?.[resolving!]?.status === 'RESOLVED' ? true : undefined,
    );
    expect(catalogue.state).toEqual(await upstreamCatalogue(harness));
    expect(listed).toEqual([added]);
    expect(typeof catalogue.state?.[added]?.probability).toBe('number');

    for (const raw of raws) {
      await waitFor('the resolution on the wire', () =>
        raw.view('markets', 'all')?.seq === catalogue.seq ? true : undefined,
      );
      // Each lifecycle change once, in the order it happened (other fields may change between).
      expect(lifecycleOf(raw)).toEqual([`${added}:listed`, `${expiring}:EXPIRED`, `${resolving}:RESOLVED`]);
      expect(raw.violations).toEqual([]);
    }
  });

  it('a filtered catalogue drops a market that leaves it; an unknown filter is refused', async () => {
    const harness = await start({ sim: { markets: 4 } });
    const { client } = connectRecorded(harness.relay.url);
    opened.push({ close: async () => client.close() });
    const active = client.subscribeMarkets({ status: 'active' });
    const delisted: string[] = [];
    active.on('delisted', ({ market }) => delisted.push(market));
    await waitFor('the active catalogue', () => active.state);
    expect(active.state).toEqual(await upstreamCatalogue(harness, 'statusFilter=active'));
    const leaving = harness.sim.market.activeMarketIds()[0]!;
    harness.sim.market.settle(leaving, 'EXPIRED');
    await waitFor('the expired market gone', () => (delisted.length > 0 ? true : undefined));
    expect(delisted).toEqual([leaving]);
    expect(active.state).toEqual(await upstreamCatalogue(harness, 'statusFilter=active'));

    const raw = await ProtocolClient.connect(harness.relay.url);
    opened.push(raw);
    raw.send({ op: 'subscribe', id: 7, channel: 'markets', markets: ['everything'] });
    await waitFor('the refusal', () => raw.of('error')[0]);
    expect(raw.of('error')[0]).toMatchObject({ id: 7, code: 'bad_request' });
    expect(String(raw.of('error')[0]!.message)).toContain('"all", "active", "expired", "resolved"');
  });

  it("filters by token as upstream's tokenId; equivalent spellings are one stream", async () => {
    const harness = await start({ sim: { markets: 6 } });
    const token = harness.sim.market.markets()[0]!.token.id;
    const { client } = connectRecorded(harness.relay.url);
    opened.push({ close: async () => client.close() });
    const records = await client.markets({ token });
    expect(Object.fromEntries(records.map((r) => [r.market_id, r]))).toEqual(
      await upstreamCatalogue(harness, `statusFilter=all&tokenId=${token}`),
    );
    expect(records.length).toBeLessThan(6);
    const raw = await ProtocolClient.connect(harness.relay.url);
    opened.push(raw);
    await raw.request({ op: 'subscribe', channel: 'markets', markets: [`all:00${token}`] });
    await waitFor('the snapshot', () => raw.view('markets', `all:${token}`));
    expect(harness.relay.registry.ids('markets').size).toBe(1);
  });
});

/** Replays a raw client's `markets` messages: each market listed and each status change, in order. */
function lifecycleOf(raw: ProtocolClient): string[] {
  const snapshot = raw.of('snapshot').find((message) => message.channel === 'markets')!;
  const status = new Map(
    Object.entries(snapshot.data as Record<string, MarketListRecord>).map(([id, r]) => [id, r.status]),
  );
  const events: string[] = [];
  for (const update of raw.of('update').filter((message) => message.channel === 'markets')) {
    for (const [id, record] of Object.entries(update.data as MarketsUpdateData)) {
      if (record === null) events.push(`${id}:delisted`);
      else if (!status.has(id)) events.push(`${id}:listed`);
      else if (status.get(id) !== record.status) events.push(`${id}:${String(record.status)}`);
      if (record === null) status.delete(id);
      else status.set(id, record.status);
    }
  }
  return events;
}
