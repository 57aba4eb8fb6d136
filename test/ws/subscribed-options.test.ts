/**
 * Every `subscribed` names every option in force on the subscription it answers (docs/protocol.md
 * "Per-subscription options", "`update`"), whatever the request named: table-driven over channels
 * and options, the answers to `subscribe` and to `update` are checked against the options expected
 * and against what `list` then shows for each stream (so an option added later is checked too),
 * a `since` echoed by the subscribe that asked for it (with its `history`) and listed; a subscribe that joined no stream (a market
 * known not to exist) names the options it asked for;
 * markets of one `update` left with different options are named each with its own; SSE's
 * `subscribed` event names them as WebSocket's answer does.
 */
import { describe, expect, it } from 'vitest';
import { type Message, ProtocolClient } from '../support/clients/protocol-client.ts';
import { SseClient } from '../support/clients/sse-client.ts';
import { type Harness, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

/** The fields of a `subscribed` that are no option of the subscription. */
const notOptions = new Set([
  'type',
  'id',
  'channel',
  'markets',
  'since',
  'history',
  'recovered',
  'streams',
  'options',
]);
/** The fields of a `list` entry that are no option of the subscription. */
const notListedOptions = new Set(['channel', 'market', 'epoch', 'seq', 'status', 'wildcard']);

const optionsIn = (message: Message, skip: ReadonlySet<string>) =>
  Object.fromEntries(Object.entries(message).filter(([name]) => !skip.has(name)));

/** A minute before the test: the simulator has trades since then. */
const SINCE = new Date(Date.now() - 60_000).toISOString();

interface Row {
  name: string;
  channel: string;
  subscribe: Record<string, unknown>;
  /** The options in force after the subscribe. */
  subscribed: Record<string, unknown>;
  update?: Record<string, unknown>;
  /** The options in force after the update. */
  updated?: Record<string, unknown>;
}

const rows: Row[] = [
  {
    name: 'book: an interval alone keeps the depth',
    channel: 'book',
    subscribe: { depth: 10 },
    subscribed: { depth: 10 },
    update: { interval: 500 },
    updated: { depth: 10, interval: 500 },
  },
  {
    name: 'book: a depth alone keeps the interval',
    channel: 'book',
    subscribe: { depth: 50, interval: 250 },
    subscribed: { depth: 50, interval: 250 },
    update: { depth: 10 },
    updated: { depth: 10, interval: 250 },
  },
  {
    name: 'book: the full book, its interval cleared',
    channel: 'book',
    subscribe: { interval: 1000 },
    subscribed: { depth: null, interval: 1000 },
    update: { interval: null },
    updated: { depth: null },
  },
  {
    name: 'price: an interval alone keeps the threshold',
    channel: 'price',
    subscribe: { threshold: '0.05' },
    subscribed: { threshold: '0.05' },
    update: { interval: 500 },
    updated: { interval: 500, threshold: '0.05' },
  },
  {
    name: 'price: a threshold cleared keeps the interval',
    channel: 'price',
    subscribe: { interval: 300, threshold: '0.010' },
    subscribed: { interval: 300, threshold: '0.01' },
    update: { threshold: null },
    updated: { interval: 300 },
  },
  {
    name: 'price: a threshold alone keeps the interval',
    channel: 'price',
    subscribe: { interval: 300 },
    subscribed: { interval: 300 },
    update: { threshold: '0.02' },
    updated: { interval: 300, threshold: '0.02' },
  },
  {
    name: 'market: an interval changed',
    channel: 'market',
    subscribe: { interval: 2000 },
    subscribed: { interval: 2000 },
    update: { interval: 100 },
    updated: { interval: 100 },
  },
  // `since` is echoed by the subscribe that asked for it, with where its history starts, and listed.
  { name: 'trades: a since', channel: 'trades', subscribe: { since: SINCE }, subscribed: {} },
];

describe('subscribed names every option in force', () => {
  let harness: Harness;
  const { opened, start } = useHarness();

  async function connect(): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(harness.relay.url);
    opened.push(client);
    return client;
  }

  async function listed(client: ProtocolClient, channel: string, market: string) {
    const answer = await client.request({ op: 'list' });
    const entry = (answer.subscriptions as Message[]).find(
      (e) => e.channel === channel && e.market === market,
    );
    return optionsIn(entry!, notListedOptions);
  }

  it('answers subscribe and update with the options in force, as list shows them', async () => {
    harness = await start({ sim: { markets: 2 } });
    const [market] = harness.sim.market.activeMarketIds() as [string];
    for (const row of rows) {
      const client = await connect();
      const answer = await client.request({
        op: 'subscribe',
        channel: row.channel,
        markets: [market],
        ...row.subscribe,
      });
      expect(answer.type, row.name).toBe('subscribed');
      expect(optionsIn(answer, notOptions), `${row.name}: subscribe`).toEqual(row.subscribed);
      expect(answer.since, row.name).toEqual(row.subscribe.since);
      const since = row.subscribe.since === undefined ? {} : { since: row.subscribe.since };
      if (row.subscribe.since !== undefined) expect(answer.history, row.name).toHaveProperty('complete');
      expect(await listed(client, row.channel, market), `${row.name}: listed`).toEqual({
        ...row.subscribed,
        ...since,
      });
      if (row.update === undefined) continue;
      const updated = await client.request({
        op: 'update',
        channel: row.channel,
        markets: [market],
        ...row.update,
      });
      expect(updated.type, row.name).toBe('subscribed');
      expect(optionsIn(updated, notOptions), `${row.name}: update`).toEqual(row.updated);
      expect(updated.options, row.name).toBeUndefined();
      expect(await listed(client, row.channel, market), `${row.name}: listed`).toEqual(row.updated);
    }
  });

  it('names each market with its own options when one update leaves them different', async () => {
    harness = await start({ sim: { markets: 3 } });
    const [a, b] = harness.sim.market.activeMarketIds() as [string, string];
    const client = await connect();
    await client.request({ op: 'subscribe', channel: 'price', markets: [a], threshold: '0.01' });
    await client.request({ op: 'subscribe', channel: 'price', markets: [b] });
    const answer = await client.request({ op: 'update', channel: 'price', markets: [a, b], interval: 500 });
    expect(answer).toMatchObject({ type: 'subscribed', markets: [a, b], interval: 500 });
    expect(answer.threshold).toBeUndefined();
    expect(answer.options).toEqual({ [a]: { interval: 500, threshold: '0.01' }, [b]: { interval: 500 } });
    // A book held at two depths over two markets: the depth each holds.
    await client.request({ op: 'subscribe', channel: 'book', markets: [a], depth: 10 });
    await client.request({ op: 'subscribe', channel: 'book', markets: [b], depth: 50 });
    const books = await client.request({ op: 'update', channel: 'book', markets: [a, b], interval: 250 });
    expect(optionsIn(books, notOptions)).toEqual({ interval: 250 });
    expect(books.options).toEqual({ [a]: { depth: 10, interval: 250 }, [b]: { depth: 50, interval: 250 } });
    expect(client.violations).toEqual([]);
  });

  it('names the options asked for when no market could be joined', async () => {
    harness = await start({ sim: { markets: 2 } });
    const unknown = '00000000-0000-4000-8000-000000000000';
    const client = await connect();
    const request = { op: 'subscribe', channel: 'book', markets: [unknown], depth: 10, interval: 500 };
    await client.request(request);
    await waitFor('the unknown market', () => client.of('error').find((e) => e.code === 'unknown_market'));
    // Known unknown now: refused at once, no stream joined to read the options from.
    const again = await client.request(request);
    expect(optionsIn(again, notOptions)).toEqual({ depth: 10, interval: 500 });
    await waitFor('the refusal', () => client.of('error').filter((e) => e.code === 'unknown_market')[1]);
    expect(await client.request({ op: 'list' })).toMatchObject({ subscriptions: [] });
  });

  it('names them on SSE as on WebSocket', async () => {
    harness = await start({ sim: { markets: 2 } });
    const [market] = harness.sim.market.activeMarketIds() as [string];
    const queries: [string, Record<string, unknown>][] = [
      ['channel=book&depth=10&interval=500', { depth: 10, interval: 500 }],
      ['channel=book&interval=500', { depth: null, interval: 500 }],
      ['channel=price&interval=300&threshold=0.050', { interval: 300, threshold: '0.05' }],
    ];
    for (const [query, expected] of queries) {
      const sse = await SseClient.connect(`${harness.relay.url}/v1/sse?${query}&markets=${market}`);
      opened.push(sse);
      expect(sse.status, query).toBe(200);
      const subscribed = await waitFor('the subscribed event', () =>
        sse.messages.find((message) => message.type === 'subscribed'),
      );
      expect(optionsIn(subscribed, notOptions), query).toEqual(expected);
    }
  });
});
