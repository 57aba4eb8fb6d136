/**
 * The SDK's typed streams of the channels after `book` and `price` (docs/client.md), against a
 * scripted relay: the state each keeps, the events it adds (`trade`, `closed`), and the resync it
 * asks for on a gap or a new epoch, over a real WebSocket; and the frame reader's checks of each
 * channel's data.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeFrame } from '../../../packages/client/src/connection/frames.ts';
import {
  connect,
  type RelayClient,
  type RelayClientError,
  type ResyncReason,
} from '../../../packages/client/src/node.ts';
import { orderListsOf } from '../../../packages/protocol/src/channels/orders/orders.ts';
import {
  channels,
  type OrderEntry,
  type ProbabilityEntry,
  type StreamMessage,
  type TradeEntry,
} from '../../../packages/protocol/src/protocol/messages.ts';
import { waitFor } from '../../support/wait-for.ts';
import { FakeRelay, stamp } from '../fake-relay.ts';
import { fastBackoff } from '../sdk-support.ts';

const market = 'b7e2c4a1-93f0-4d5e-8a6b-2c1d0e9f8a7b';
const feed = '0xe62df6c8b4a85fe1a67db44dc12de5db330f7ac66b72dc658afedf0f4a415b43';

let relay: FakeRelay;
let client: RelayClient;

async function start(): Promise<void> {
  relay = await FakeRelay.start();
  client = connect(relay.url, { backoff: fastBackoff });
}

afterEach(async () => {
  await client?.close();
  await relay?.close();
});

/** A stream message of `channel` for `market` with the fake's stamps. */
function message(
  type: 'snapshot' | 'update',
  channel: StreamMessage['channel'],
  id: string,
  seq: number,
  data: unknown,
  epoch = 'e1',
): Record<string, unknown> {
  return { type, channel, market: id, epoch, seq, ...stamp, data };
}

function trade(n: number): TradeEntry {
  return {
    activity_id: `act_${String(n).padStart(6, '0')}`,
    activity_type: 'TRADE',
    price: '0.61500000',
    size: `${n}.5`,
    total_value: '6.45750000',
    activity_timestamp: `2026-03-02T14:${String(n % 60).padStart(2, '0')}:00.000Z`,
  };
}
const trades = (from: number, to: number): TradeEntry[] =>
  Array.from({ length: to - from + 1 }, (_, i) => trade(from + i));
const ids = (entries: readonly TradeEntry[]): string[] => entries.map((entry) => entry.activity_id);

describe('trades', () => {
  it('keeps the recent trades and announces each one once, across a gap resync and a new epoch', async () => {
    await start();
    const stream = client.subscribeTrades(market.toUpperCase());
    const announced: string[] = [];
    const resyncs: ResyncReason[] = [];
    stream.on('trade', (entry) => announced.push(entry.activity_id));
    stream.on('resync', ({ reason }) => resyncs.push(reason));
    expect((await relay.subscribe('trades')).markets).toEqual([market]);

    relay.send(message('snapshot', 'trades', market, 10, { trades: trades(1, 3) }));
    relay.send(message('update', 'trades', market, 11, { trades: trades(4, 5) }));
    await waitFor('the update', () => stream.seq === 11);
    expect(ids(stream.state ?? [])).toEqual(ids(trades(1, 5)));
    expect(announced).toEqual(ids(trades(1, 5)));

    // seq 13 after 11: a gap. The SDK asks for a snapshot again (no resume) and drops updates meanwhile.
    relay.send(message('update', 'trades', market, 13, { trades: trades(7, 7) }));
    const again = await relay.subscribe('trades', 1);
    expect(again.resume).toBeUndefined();
    expect(stream.status).toBe('resyncing');
    relay.send(message('snapshot', 'trades', market, 13, { trades: trades(1, 7) }));
    await waitFor('the resync snapshot', () => stream.status === 'live' && stream.seq === 13);
    expect(ids(stream.state ?? [])).toEqual(ids(trades(1, 7)));
    expect(announced).toEqual(ids(trades(1, 7)));

    // The relay restarts: the SDK resumes, gets a snapshot of a new epoch holding trades it announced.
    relay.dropConnections();
    const resumed = await relay.subscribe('trades', 2);
    expect(resumed.resume).toEqual({ [market]: { epoch: 'e1', seq: 13 } });
    relay.send(message('snapshot', 'trades', market, 0, { trades: trades(3, 9) }, 'e2'));
    relay.send(message('update', 'trades', market, 1, { trades: [trade(9), trade(10)] }, 'e2'));
    await waitFor('the new epoch', () => stream.epoch === 'e2' && stream.seq === 1);
    expect(resyncs).toEqual(['gap', 'epoch']);
    expect(announced).toEqual(ids(trades(1, 10)));
    expect(ids(stream.state ?? [])).toEqual(ids(trades(3, 10)));
  });

  it('holds at most the 50 most recent trades, oldest first', async () => {
    await start();
    const stream = client.subscribeTrades(market);
    let announced = 0;
    stream.on('trade', () => announced++);
    await relay.subscribe('trades');
    relay.send(message('snapshot', 'trades', market, 1, { trades: trades(1, 40) }));
    relay.send(message('update', 'trades', market, 2, { trades: trades(41, 120) }));
    await waitFor('the burst', () => stream.seq === 2);
    expect(ids(stream.state ?? [])).toEqual(ids(trades(71, 120)));
    expect(announced).toBe(120);
  });
});

describe('market', () => {
  it('applies changed fields, announces leaving ACTIVE once, then ends when the relay closes the stream', async () => {
    await start();
    const stream = client.subscribeMarket(market);
    const closed: string[] = [];
    stream.on('closed', ({ status }) => closed.push(status));
    await relay.subscribe('market');
    const record = {
      market_id: market,
      market_name: 'btc-above-100k-mar',
      title: 'BTC above 100k on 31 March?',
      question: 'Will BTC/USD trade above 100,000 at 23:59 UTC on 31 March?',
      status: 'ACTIVE',
      exchange_address: '0x5f3c9a1e2b7d4c6f8a0e1d3b5c7a9f2e4d6b8c0a',
      oracle_address: '0x9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b',
      oracle_feed_id: feed,
      probability: 0.615,
      volume: 182344.5,
      expiration_timestamp: '2026-03-31T23:59:00.000Z',
    };
    relay.send(message('snapshot', 'market', market, 1, record));
    relay.send(
      message('update', 'market', market, 2, { probability: 0.64, volume: 183010.25, question: null }),
    );
    await waitFor('the update', () => stream.seq === 2);
    const { question: _gone, ...rest } = record;
    expect(stream.state).toEqual({ ...rest, probability: 0.64, volume: 183010.25 });
    expect(closed).toEqual([]);

    relay.send(message('update', 'market', market, 3, { status: 'RESOLVED', probability: 1 }));
    relay.send({ type: 'status', channel: 'market', market, state: 'closed', reason: 'market resolved' });
    await waitFor('the stream to close', () => stream.status === 'closed');
    expect(closed).toEqual(['RESOLVED']);
    expect(stream.state?.status).toBe('RESOLVED');
    expect(client.streams).toEqual([]);
  });
});

describe('probabilities', () => {
  it('subscribes the one `all` stream and keeps the map: changed entries replace, null removes', async () => {
    await start();
    const stream = client.subscribeProbabilities();
    expect(client.subscribeProbabilities()).toBe(stream);
    expect((await relay.subscribe('probabilities')).markets).toEqual(['all']);
    const entry = (midpoint: number): ProbabilityEntry => ({
      midpoint,
      best_bid: midpoint - 0.005,
      best_ask: midpoint + 0.005,
      last_trade_price: midpoint,
      timestamp: '2026-03-02T14:05:09.000Z',
    });
    const other = '0c9d8e7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f';
    relay.send(
      message('snapshot', 'probabilities', 'all', 5, { [market]: entry(0.615), [other]: entry(0.2) }),
    );
    relay.send(message('update', 'probabilities', 'all', 6, { [market]: entry(0.64), [other]: null }));
    await waitFor('the update', () => stream.seq === 6);
    expect(stream.state).toEqual({ [market]: entry(0.64) });
  });
});

describe('oracle', () => {
  it('subscribes a feed id in lower case, refuses anything else, and takes each record whole', async () => {
    await start();
    expect(() => client.subscribeOracle('e62df6c8')).toThrow(TypeError);
    const stream = client.subscribeOracle(feed.toUpperCase().replace('0X', '0x'));
    expect((await relay.subscribe('oracle')).markets).toEqual([feed]);
    const record = {
      feed_id: feed,
      price: 97234.18,
      raw_price: '9723418000000',
      expo: -8,
      publish_time: 1772460309,
    };
    relay.send(message('snapshot', 'oracle', feed, 1, record));
    const next = { ...record, price: 97240.02, raw_price: '9724002000000', publish_time: 1772460310 };
    relay.send(message('update', 'oracle', feed, 2, next));
    await waitFor('the update', () => stream.seq === 2);
    expect(stream.state).toEqual(next);
  });
});

describe('orders', () => {
  const order = (id: string, price: string, size: string): OrderEntry => ({ id, price, size, token_id: 1 });

  it('keeps orders by id per side: upserts in place, new ids appended, moves, removes; resyncs on a gap', async () => {
    await start();
    const stream = client.subscribeOrders(market);
    await relay.subscribe('orders');
    relay.send(
      message('snapshot', 'orders', market, 1, {
        bids: [order('b1', '0.61000000', '100'), order('b2', '0.60000000', '40')],
        asks: [order('a1', '0.62000000', '75.5')],
      }),
    );
    relay.send(
      message('update', 'orders', market, 2, {
        upserts: [
          { side: 'bid', ...order('b1', '0.61000000', '60') },
          { side: 'ask', ...order('a2', '0.63000000', '10') },
          { side: 'ask', ...order('b2', '0.60000000', '40') },
        ],
        removes: ['a1'],
      }),
    );
    await waitFor('the update', () => stream.seq === 2);
    expect(orderListsOf(stream.state!)).toEqual({
      bids: [order('b1', '0.61000000', '60')],
      asks: [order('a2', '0.63000000', '10'), order('b2', '0.60000000', '40')],
    });
    expect(stream.state?.asks.get('a2')?.size).toBe('10');

    const before = stream.state;
    relay.send(message('update', 'orders', market, 4, { upserts: [], removes: ['b1'] }));
    await relay.subscribe('orders', 1);
    expect(stream.state).toBe(before);
    relay.send(
      message('snapshot', 'orders', market, 4, { bids: [], asks: [order('a2', '0.63000000', '10')] }),
    );
    await waitFor('the resync snapshot', () => stream.status === 'live' && stream.seq === 4);
    expect(orderListsOf(stream.state!)).toEqual({ bids: [], asks: [order('a2', '0.63000000', '10')] });
  });

  it('reports an order change it cannot read and resyncs that stream', async () => {
    await start();
    const errors: RelayClientError[] = [];
    client.on('error', (error) => errors.push(error));
    const stream = client.subscribeOrders(market);
    await relay.subscribe('orders');
    relay.send(message('snapshot', 'orders', market, 1, { bids: [], asks: [] }));
    relay.send(
      message('update', 'orders', market, 2, { upserts: [{ side: 'middle', id: 'x' }], removes: [] }),
    );
    await relay.subscribe('orders', 1);
    expect(errors.map((error) => error.code)).toEqual(['malformed_frame']);
    expect(stream.status).toBe('resyncing');
  });
});

describe('frame reader', () => {
  const doc = readFileSync(new URL('../../../docs/protocol.md', import.meta.url), 'utf8');
  const streamExamples = [...doc.matchAll(/```json\n([\s\S]*?)\n```/g)]
    .map((match) => JSON.parse(match[1] ?? '') as Record<string, unknown> & { data: Record<string, unknown> })
    .filter((example) => example.type === 'snapshot' || example.type === 'update');
  const example = (type: string, channel: string) => {
    const found = streamExamples.find(
      (candidate) => candidate.type === type && candidate.channel === channel,
    );
    if (found === undefined) throw new Error(`docs/protocol.md has no ${channel} ${type}`);
    return structuredClone(found);
  };

  it("reads every channel's snapshot and update as docs/protocol.md shows them", () => {
    for (const channel of channels) {
      for (const type of ['snapshot', 'update']) {
        expect(decodeFrame(JSON.stringify(example(type, channel))), `${channel} ${type}`).toMatchObject({
          ok: true,
        });
      }
    }
  });

  it('refuses a field of another type than upstream gives, naming the stream', () => {
    const trades = example('snapshot', 'trades');
    (trades.data.trades as Array<Record<string, unknown>>)[0]!.price = 0.52;
    const probabilities = example('update', 'probabilities');
    probabilities.data[market] = { midpoint: '0.5' };
    const oracle = example('update', 'oracle');
    oracle.data.raw_price = 10424002000000;
    const orders = example('snapshot', 'orders');
    (orders.data.bids as Array<Record<string, unknown>>)[0]!.token_id = '1';
    const changes = example('update', 'orders');
    (changes.data.upserts as Array<Record<string, unknown>>)[0]!.side = 'buy';
    const nullInSnapshot = example('snapshot', 'probabilities');
    nullInSnapshot.data[market] = null;
    for (const [message, reason] of [
      [trades, 'trades'],
      [probabilities, 'probability entries'],
      [oracle, 'oracle record'],
      [orders, 'orders'],
      [changes, 'order changes'],
      [nullInSnapshot, 'probability entries'],
    ] as const) {
      expect(decodeFrame(JSON.stringify(message))).toEqual({
        ok: false,
        reason: `malformed ${String(message.type)}: ${reason}`,
        stream: { channel: message.channel, market: message.market, depth: undefined },
      });
    }
  });
});
