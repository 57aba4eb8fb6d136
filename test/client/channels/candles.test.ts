/**
 * The SDK's `candles` streams (docs/client.md "Candles") against a scripted relay: the state it keeps
 * (each update's candles replacing those of the same start), `final` once per candle that closes
 * after the snapshot, and a resync when a message's checksum does not match the candles.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type RelayClient, type ResyncReason } from '../../../packages/client/src/node.ts';
import { candlesChecksum } from '../../../packages/protocol/src/channels/candles/candles.ts';
import type { Candle, CandlesData } from '../../../packages/protocol/src/protocol/messages.ts';
import { waitFor } from '../../support/wait-for.ts';
import { FakeRelay, stamp } from '../fake-relay.ts';
import { fastBackoff } from '../sdk-support.ts';

const market = 'b7e2c4a1-93f0-4d5e-8a6b-2c1d0e9f8a7b';
const id = `${market}:1m:trades`;

let relay: FakeRelay;
let client: RelayClient;

afterEach(async () => {
  await client?.close();
  await relay?.close();
});

function candle(minute: number, close: string, final: boolean): Candle {
  const start = `2026-03-02T14:${String(minute).padStart(2, '0')}:00.000Z`;
  return { start, open: '0.50000000', high: close, low: '0.50000000', close, volume: '10', trades: 2, final };
}

function message(type: 'snapshot' | 'update', seq: number, data: CandlesData, state: CandlesData) {
  return {
    type,
    channel: 'candles',
    market: id,
    epoch: 'e1',
    seq,
    ...stamp,
    data,
    checksum: candlesChecksum(state),
  };
}

describe('candles', () => {
  it('keeps the candles, announces each one that closes once, and resyncs on a checksum mismatch', async () => {
    relay = await FakeRelay.start();
    client = connect(relay.url, { backoff: fastBackoff });
    const stream = client.subscribeCandles(market.toUpperCase(), { interval: '1m', source: 'trades' });
    expect(stream.market).toBe(id);
    expect(stream.candles).toEqual({ market, interval: '1m', source: 'trades' });
    expect(client.subscribeCandles(market, { interval: '1m', source: 'trades' })).toBe(stream);
    expect(() => client.subscribeCandles('not-a-market', { interval: '1m', source: 'trades' })).toThrow(
      TypeError,
    );
    const finals: string[] = [];
    const resyncs: ResyncReason[] = [];
    stream.on('final', (closed) => finals.push(closed.start));
    stream.on('resync', ({ reason }) => resyncs.push(reason));
    expect((await relay.subscribe('candles')).markets).toEqual([id]);

    const snapshot = { candles: [candle(0, '0.51000000', true), candle(1, '0.52000000', false)] };
    relay.send(message('snapshot', 1, snapshot, snapshot));
    const update = { candles: [candle(1, '0.53000000', true), candle(2, '0.53000000', false)] };
    const after = { candles: [snapshot.candles[0]!, ...update.candles] };
    relay.send(message('update', 2, update, after));
    await waitFor('the update', () => stream.seq === 2);
    expect(stream.state).toEqual(after.candles);
    expect(finals).toEqual([candle(1, '', true).start]);

    // A checksum of other candles: the SDK asks for a snapshot again.
    const wrong = { candles: [candle(2, '0.54000000', false)] };
    relay.send(message('update', 3, wrong, snapshot));
    await relay.subscribe('candles', 1);
    expect(resyncs).toEqual(['checksum']);

    // Minute 2 closed while the stream resynced: the snapshot that ends the resync announces it.
    const resynced = {
      candles: [candle(1, '0.53000000', true), candle(2, '0.54000000', true), candle(3, '0.54000000', false)],
    };
    relay.send(message('snapshot', 4, resynced, resynced));
    await waitFor('the resync snapshot', () => stream.seq === 4);
    expect(finals).toEqual([candle(1, '', true).start, candle(2, '', true).start]);
  });
});
