/**
 * `candles` of source `probability` with `since` on a recording relay (docs/history.md "Since"):
 * where the record of the `probabilities` map reaches back to the range's start, the candles come
 * from it, each recorded entry's midpoint filed by its own time, and equal the candles folded from
 * what a live `probabilities` client was sent, with no upstream request; the subscription says
 * `complete: true` from the time and its snapshot carries them in `history`. Where that record
 * starts later, `complete: false` as before.
 *
 * The recording starts inside a minute, and the range starts at the minute's start: the test
 * writes one more snapshot of the map, the live client's first, at that start, so that the record
 * reaches back without waiting for the next minute (its entries keep their own times, so no
 * candle changes by it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ProbabilityEntry } from '../../../packages/protocol/src/channels/probabilities/probabilities.ts';
import { streamKey } from '../../../packages/protocol/src/channels/stream-key.ts';
import { type ChannelUpstream, historyOf } from '../../../src/relay/channels/relay-registry.ts';
import type { Message } from '../../support/clients/message-recorder.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

const HOUR = 3_600_000;
const MINUTE = 60_000;

/** The market's candles of `messages` (a probabilities client's), as a candles stream files points. */
function candlesOf(messages: readonly Message[], market: string, from: number) {
  const byStart = new Map<
    number,
    { open: number; high: number; low: number; close: number; openAt: number; closeAt: number }
  >();
  for (const message of messages) {
    const entry = (message.data as Record<string, ProbabilityEntry | null>)[market];
    if (entry === null || entry === undefined) continue;
    const at = Date.parse(entry.timestamp);
    if (at < from) continue;
    const start = Math.floor(at / MINUTE) * MINUTE;
    const value = entry.midpoint;
    const candle = byStart.get(start);
    if (candle === undefined) {
      byStart.set(start, { open: value, high: value, low: value, close: value, openAt: at, closeAt: at });
      continue;
    }
    if (at < candle.openAt) Object.assign(candle, { open: value, openAt: at });
    if (at >= candle.closeAt) Object.assign(candle, { close: value, closeAt: at });
    candle.high = Math.max(candle.high, value);
    candle.low = Math.min(candle.low, value);
  }
  return [...byStart.entries()]
    .sort(([a], [b]) => a - b)
    .map(([start, { open, high, low, close }]) => ({
      start: new Date(start).toISOString(),
      open,
      high,
      low,
      close,
      final: true,
    }));
}

describe('probability candles since a time, from the recorded probabilities', () => {
  const { opened, start } = useHarness();

  it('equal the candles of what live clients were sent, read from the record alone; complete from the time', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'history-since-candles-'));
    folders.push(dataDir);
    const harness = await start({
      sim: { markets: 3, seed: 11, tickMs: 10 },
      relay: { history: { store: 'embedded', dataDir, retentionMs: HOUR, maxBytes: 1024 ** 3 } },
    });
    const { sim, relay } = harness;
    const [market] = sim.market.activeMarketIds() as [string];
    const connect = async () => {
      const client = await ProtocolClient.connect(relay.url);
      opened.push(client);
      return client;
    };
    const live = await connect();
    await live.request({ op: 'subscribe', channel: 'probabilities', markets: ['all'] });
    const sent = () =>
      live.messages.filter((message) => message.channel === 'probabilities' && message.data !== undefined);
    const times = () =>
      new Set(
        sent().map((message) => (message.data as Record<string, ProbabilityEntry | null>)[market]?.timestamp),
      );
    await waitFor('the market moving', () => times().size >= 20);
    // The market stops; the live client holds its last entry.
    sim.setTickMs(0);
    const upstream = (await (await fetch(`${sim.url}/api/markets/probabilities`)).json()) as {
      probabilities: Record<string, ProbabilityEntry>;
    };
    const last = upstream.probabilities[market]!;
    await waitFor(
      'the last entry',
      () =>
        live.view('probabilities', 'all')?.state !== undefined &&
        (live.view('probabilities', 'all')!.state as Record<string, ProbabilityEntry>)[market]?.timestamp ===
          last.timestamp,
    );

    const first = sent()[0]!;
    const since = Date.parse(first.rts as string);
    const rangeStart = Math.floor(since / MINUTE) * MINUTE;
    const record = relay.sinceReads.record!;
    await record.store.append([
      {
        channel: 'probabilities',
        stream: streamKey('probabilities', 'all'),
        market: 'all',
        depth: undefined,
        epoch: 'written-by-the-test',
        seq: 1,
        ts: new Date(rangeStart).toISOString(),
        rts: new Date(rangeStart).toISOString(),
        type: 'snapshot',
        data: JSON.stringify(first.data),
        checksum: undefined,
      },
    ]);

    // The read itself, every candle final (as it will be once the minutes end): the live client's.
    let requests = 0;
    const read = await historyOf('candles')!.read(
      {} as ChannelUpstream,
      `${market}:1m:probability`,
      { kind: 'time', at: since, text: first.rts as string },
      Date.now() + 2 * MINUTE,
      () => {
        requests += 1;
        throw new Error('upstream was asked');
      },
      relay.sinceReads.recorded({ epoch: first.epoch as string, seq: first.seq as number }),
    );
    expect(requests).toBe(0);
    expect(read).toMatchObject({ ok: true, pages: 0 });
    const expected = candlesOf(sent(), market, rangeStart);
    expect(expected.length).toBeGreaterThan(0);
    expect((read as { candles?: unknown }).candles).toEqual(expected);

    // On the wire: complete from the time, answered by the read (its snapshot carries `history`).
    const late = await connect();
    const sinceText = new Date(since).toISOString();
    const stream = `${market}:1m:probability`;
    const answer = await late.request({
      op: 'subscribe',
      channel: 'candles',
      markets: [stream],
      since: sinceText,
    });
    expect(answer).toMatchObject({
      type: 'subscribed',
      since: sinceText,
      history: { from: sinceText, complete: true },
    });
    const snapshot = await waitFor('the candles snapshot', () =>
      late.messages.find((message) => message.channel === 'candles' && message.type === 'snapshot'),
    );
    expect((snapshot.data as { history?: unknown[] }).history).toBeInstanceOf(Array);
    expect(late.violations).toEqual([]);

    // Before the record of the map starts: as before, complete: false.
    const early = await connect();
    const before = new Date(rangeStart - 5 * MINUTE).toISOString();
    const refused = await early.request({
      op: 'subscribe',
      channel: 'candles',
      markets: [stream],
      since: before,
    });
    expect(refused).toMatchObject({ type: 'subscribed', history: { complete: false } });
  });
});
