/**
 * `trades` `since` a time on a recording relay whose record of the market's trades starts after
 * the time (docs/history.md "Since"), against a listing newest first and one oldest first with
 * pages of 25: the trades upstream lists before the record, then the recorded ones, each
 * `activity_id` once, in order, then live; upstream's activity pages are read only before the
 * record's oldest trade (the simulator's request log: no page of the since read falls on the
 * recorded part's offsets); an `activity_id` the record holds asks upstream for no page.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SimRequestLogEntry } from '../../../src/sim/admin.ts';
import { entriesOf, tradeMessages, upstreamListing } from '../../support/channels/trades.ts';
import { ids } from '../../support/channels/trades-listing.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

const HOUR = 3_600_000;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(['default', 'terse'] as const)('trades since before the record (%s profile)', (profile) => {
  const { opened, start } = useHarness(profile);

  it('upstream before the record, the record after it, each trade once, then live; no upstream page of the recorded part', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'history-since-trades-'));
    folders.push(dataDir);
    const harness = await start({
      sim: { markets: 3, tradeFlow: () => undefined },
      relay: {
        pricePollMs: 100,
        history: { store: 'embedded', dataDir, retentionMs: HOUR, maxBytes: 1024 ** 3 },
      },
    });
    const { sim } = harness;
    const market = sim.market.activeMarketIds()[0]!;
    // Trades before anything records them: three batches a few ms apart, the time at the first.
    const since = new Date(Date.now()).toISOString();
    await pause(5);
    for (let batch = 0; batch < 3; batch++) {
      sim.market.printTrades(market, 50);
      await pause(5);
    }
    const connect = async () => {
      const client = await ProtocolClient.connect(harness.relay.url);
      opened.push(client);
      return client;
    };
    // The record starts with the live client's snapshot (the newest 50), then what it is sent.
    const live = await connect();
    await live.request({ op: 'subscribe', channel: 'trades', markets: [market] });
    for (let round = 0; round < 3; round++) {
      sim.market.printTrades(market, 60);
      const newest = sim.market.market(market)!.trades.at(-1)!.id;
      await waitFor(`the live trade ${newest}`, () =>
        ids(entriesOf(tradeMessages(live, market))).includes(newest),
      );
    }
    const recorded = new Set(ids(entriesOf(tradeMessages(live, market)))).size;
    const length = sim.market.market(market)!.trades.length;
    const logged = sim.requests.length;

    const late = await connect();
    const answer = await late.request({ op: 'subscribe', channel: 'trades', markets: [market], since });
    expect(answer).toMatchObject({ type: 'subscribed', since, history: { from: since, complete: true } });
    await waitFor('the since snapshot', () => tradeMessages(late, market).length > 0);
    const read = sim.requests
      .slice(logged)
      .filter((entry) => entry.path === `/api/markets/${market}/activity`);
    // The polls' own requests: newest first the head page, oldest first from the listing's last entry.
    const offset = (entry: SimRequestLogEntry) => Number(entry.query.offset ?? 0);
    const limit = (entry: SimRequestLogEntry) => Number(entry.query.limit ?? 0);
    const polls = (entry: SimRequestLogEntry) =>
      profile === 'default' ? offset(entry) === 0 : offset(entry) >= length - 1;
    const sinceRead = read.filter((entry) => !polls(entry));
    // The recorded part: newest first offsets 0 to recorded - 2, oldest first from length - recorded + 1
    // (there, the first page, read at recorded - 1 to tell the order, may reach into it).
    const inRecordedPart = (entry: SimRequestLogEntry) =>
      limit(entry) > 1 &&
      (profile === 'default'
        ? offset(entry) < recorded - 1
        : offset(entry) !== recorded - 1 &&
          offset(entry) + Math.min(limit(entry), 25) > length - recorded + 1);
    expect(sinceRead.length).toBeGreaterThan(0);
    expect(sinceRead.filter(inRecordedPart).map((entry) => entry.query)).toEqual([]);
    // The 100 trades before the record: newest first two pages of 100 from the record's oldest;
    // oldest first two chunks of 100 read backwards in pages of 25, beside the probes for the end.
    const pages = sinceRead.filter((entry) => limit(entry) > 1).length;
    expect(pages).toBeLessThanOrEqual(profile === 'default' ? 2 : 9);

    for (let round = 0; round < 2; round++) {
      sim.market.printTrades(market, 5);
      const newest = sim.market.market(market)!.trades.at(-1)!.id;
      for (const client of [live, late])
        await waitFor(`the live trade ${newest}`, () =>
          ids(entriesOf(tradeMessages(client, market))).includes(newest),
        );
    }
    const listing = await upstreamListing(sim, market);
    const messages = tradeMessages(late, market);
    expect(messages[0]!.type).toBe('snapshot');
    expect(messages.slice(1).every((message) => message.type === 'update')).toBe(true);
    const seqs = messages.map((message) => message.seq as number);
    expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
    const expected = ids(
      listing.filter((entry) => Date.parse(entry.activity_timestamp) >= Date.parse(since)),
    );
    // Upstream's part was there to read: 100 trades or more before the record's oldest.
    expect(expected.length).toBeGreaterThanOrEqual(recorded + 100);
    expect(ids(entriesOf(messages))).toEqual(expected);
    expect(late.of('error')).toEqual([]);
    expect(late.violations).toEqual([]);

    // An activity_id the record holds: the trades after it, from the record, no page of upstream.
    const named = ids(entriesOf(tradeMessages(live, market)))[20]!;
    const loggedBefore = sim.requests.length;
    const byId = await connect();
    await byId.request({ op: 'subscribe', channel: 'trades', markets: [market], since: named });
    await waitFor('the since snapshot', () => tradeMessages(byId, market).length > 0);
    const lengthNow = sim.market.market(market)!.trades.length;
    const byIdRead = sim.requests
      .slice(loggedBefore)
      .filter((entry) => entry.path === `/api/markets/${market}/activity`)
      .filter((entry) => (profile === 'default' ? offset(entry) !== 0 : offset(entry) < lengthNow - 1));
    expect(byIdRead.map((entry) => entry.query)).toEqual([]);
    const listed = ids(await upstreamListing(sim, market));
    const newest = listed.at(-1)!;
    await waitFor(`the live trade ${newest}`, () =>
      ids(entriesOf(tradeMessages(byId, market))).includes(newest),
    );
    expect(ids(entriesOf(tradeMessages(byId, market)))).toEqual(listed.slice(listed.indexOf(named) + 1));
  });
});
