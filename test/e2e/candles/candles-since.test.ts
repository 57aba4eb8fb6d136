/**
 * End to end, `candles` with `since` (docs/protocol.md "History since a time"): trades printed at
 * past times on a simulator clock the test sets, more of them than a candle stream's backfill
 * reads, so the stream's own candles start later than the range asked. A subscription `since` 30
 * minutes back gets the stream's state (checked against its checksum) and, in `history`, the final
 * candles before it: together every 1m trade candle of the range, as the test aggregates them
 * itself from upstream's own activity pages; live updates then follow with valid checksums. Two
 * subscribers asking the same range share one read; a bad `since` is refused with the request's id
 * and nothing else changes.
 */
import { describe, expect, it } from 'vitest';
import { candlesStreamId } from '../../../packages/protocol/src/channels/candles/streams.ts';
import { compareDecimals, sumDecimals } from '../../../packages/protocol/src/protocol/decimal.ts';
import type {
  CandlesData,
  TradeEntry,
  TradesCandle,
} from '../../../packages/protocol/src/protocol/messages.ts';
import type { SimulatorHandle } from '../../../src/sim/server.ts';
import { upstreamListing } from '../../support/channels/trades.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { type Harness, useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

const MINUTE = 60_000;

/** The candle fields the test aggregates, by candle start. */
type Totals = Pick<TradesCandle, 'open' | 'high' | 'low' | 'close' | 'volume' | 'trades'>;
const totalsOf = ({ open, high, low, close, volume, trades }: TradesCandle): Totals => ({
  open,
  high,
  low,
  close,
  volume,
  trades,
});

/** 1m candles of upstream's listing (oldest first) from `from` on, as docs/protocol.md defines them. */
function aggregate(listing: readonly TradeEntry[], from: number): Map<string, Totals> {
  const byMinute = new Map<string, TradeEntry[]>();
  for (const entry of listing) {
    const at = Date.parse(entry.activity_timestamp);
    if (at < from) continue;
    const start = new Date(Math.floor(at / MINUTE) * MINUTE).toISOString();
    byMinute.set(start, [...(byMinute.get(start) ?? []), entry]);
  }
  const candles = new Map<string, Totals>();
  for (const [start, entries] of byMinute) {
    // Listed oldest first: of prints at the same time, the later listed is the later.
    const byTime = [...entries].sort(
      (a, b) => Date.parse(a.activity_timestamp) - Date.parse(b.activity_timestamp),
    );
    const prices = entries.map((entry) => entry.price).sort(compareDecimals);
    candles.set(start, {
      open: byTime[0]!.price,
      high: prices.at(-1)!,
      low: prices[0]!,
      close: byTime.at(-1)!.price,
      volume: sumDecimals(entries.map((entry) => entry.size)),
      trades: entries.length,
    });
  }
  return candles;
}

/** The simulator's clock: fixed at a past time while the test prints there, else the real one. */
const clock: { at: number | undefined } = { at: undefined };

/** Prints `count` trades in four batches 10 s apart from `minutesBack` minutes ago (a minute's start + 5 s). */
function printBack(sim: SimulatorHandle, market: string, minutesBack: number, count: number): void {
  const minute = Math.floor((Date.now() - minutesBack * MINUTE) / MINUTE) * MINUTE;
  for (let batch = 0; batch < 4; batch++) {
    clock.at = minute + 5_000 + batch * 10_000;
    sim.market.printTrades(market, count / 4);
  }
  clock.at = undefined;
}

describe('candles since', () => {
  const { opened, start } = useHarness();

  async function started(): Promise<{ harness: Harness; market: string }> {
    // The simulator starts 40 minutes back: its seeded trades are older than the range asked.
    clock.at = Date.now() - 40 * MINUTE;
    const harness = await start({
      sim: { markets: 2, tradeFlow: () => undefined, now: () => clock.at ?? Date.now() },
      relay: { pricePollMs: 100 },
    });
    clock.at = undefined;
    return { harness, market: harness.sim.market.activeMarketIds()[0]! };
  }

  async function connect(harness: Harness): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(harness.relay.url);
    opened.push(client);
    return client;
  }

  it('since 30 minutes back: the state and its history hold every trade candle of the range, then live updates with valid checksums', async () => {
    const { harness, market } = await started();
    // 600 trades in three past minutes: the stream's backfill reads the newest 500 only.
    for (const minutesBack of [25, 20, 12]) printBack(harness.sim, market, minutesBack, 200);
    const since = new Date(Date.now() - 30 * MINUTE).toISOString();
    const id = candlesStreamId({ market, interval: '1m', source: 'trades' });
    const [a, b] = [await connect(harness), await connect(harness)];
    const subscribe = { op: 'subscribe', channel: 'candles', markets: [id], since };
    for (const answer of await Promise.all([a.request(subscribe), b.request(subscribe)]))
      expect(answer).toMatchObject({ type: 'subscribed', since });
    await waitFor('the since snapshots', () => [a, b].every((client) => client.view('candles', id)));
    expect(harness.relay.sinceReads.started).toBe(1);
    const snapshot = a.messages.find((m) => m.type === 'snapshot' && m.market === id)!;
    const { history } = snapshot.data as CandlesData;
    // The stream's own candles start after the oldest printed minute, which the history brings.
    expect(history?.length).toBeGreaterThan(0);
    expect(history!.every((candle) => candle.final)).toBe(true);

    harness.sim.market.printTrades(market, 5);
    const listing = await upstreamListing(harness.sim, market);
    const from = Math.floor(Date.parse(since) / MINUTE) * MINUTE;
    const expected = aggregate(listing, from);
    expect([...expected.values()].reduce((sum, candle) => sum + candle.trades, 0)).toBe(605);
    for (const client of [a, b]) {
      const received = () => {
        const candles = new Map<string, Totals>();
        for (const candle of [...history!, ...(client.view('candles', id)!.state as CandlesData).candles])
          if (Date.parse(candle.start) >= from) candles.set(candle.start, totalsOf(candle as TradesCandle));
        return candles;
      };
      await waitFor('the live trades', () => received().size === expected.size);
      expect(Object.fromEntries(received())).toEqual(Object.fromEntries(expected));
      const messages = client.messages.filter((m) => m.market === id);
      expect(messages.slice(1).some((m) => m.type === 'update')).toBe(true);
      expect(client.of('error')).toEqual([]);
      expect(client.violations).toEqual([]);
    }
  });

  it('refuses a bad since with the id, and nothing else changes; SSE takes since in its query', async () => {
    const { harness, market } = await started();
    const trades = candlesStreamId({ market, interval: '1m', source: 'trades' });
    const probability = candlesStreamId({ market, interval: '1m', source: 'probability' });
    const client = await connect(harness);
    await client.request({ op: 'subscribe', channel: 'candles', markets: [trades] });
    await waitFor('the snapshot', () => client.view('candles', trades));
    const before = await client.request({ op: 'list' });
    const messagesBefore = client.messages.length;
    const now = new Date().toISOString();
    const refused = [
      { markets: [trades], since: new Date(Date.now() + MINUTE).toISOString() },
      { markets: [trades], since: new Date(Date.now() - 25 * 60 * MINUTE).toISOString() },
      { markets: [trades], since: '2025-06-01T12:00' },
      { markets: [trades], since: 'an-activity-id' },
      { markets: [trades], since: now, resume: { [trades]: { epoch: 'x', seq: 1 } } },
      { markets: [probability], since: now },
      { markets: [trades, probability], since: now },
    ];
    for (const request of refused) {
      const answer = await client.request({ op: 'subscribe', channel: 'candles', ...request });
      expect(answer).toMatchObject({ type: 'error', code: 'bad_request' });
      expect(String(answer.message)).toMatch(/since/);
    }
    const after = await client.request({ op: 'list' });
    expect(
      client.messages.slice(messagesBefore).every((m) => m.type === 'error' || m.type === 'subscriptions'),
    ).toBe(true);
    expect(after.subscriptions).toEqual(before.subscriptions);

    const sse = await fetch(
      `${harness.relay.url}/v1/sse?channel=candles&markets=${probability}&since=${encodeURIComponent(now)}`,
    );
    expect(sse.status).toBe(400);
    await sse.body?.cancel();
  });
});
