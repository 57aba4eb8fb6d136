/**
 * `GET /v1/sse` (docs/protocol.md "Server-Sent Events"): the WebSocket's streams as SSE events, each
 * carrying every stream's position in its id, so that a reconnect with `Last-Event-ID` resumes
 * exactly: the missed updates, no snapshot, no gap.
 */
import { describe, expect, it } from 'vitest';
import type { BookState } from '../../packages/protocol/src/protocol/book.ts';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { SseClient } from '../support/clients/sse-client.ts';
import { expectedBook, type Harness, upstreamBook, upstreamPrices, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

describe('SSE endpoint', () => {
  let harness: Harness;
  const { opened, start } = useHarness();

  async function connect(query: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const client = await SseClient.connect(`${harness.relay.url}/v1/sse?${query}`, headers);
    opened.push(client);
    return client;
  }

  /** Ticks the simulator and waits until every full-book stream has published it (a tick moves every book). */
  async function tickAndWait(markets: string[], times: number): Promise<void> {
    for (let i = 0; i < times; i++) {
      const streams = markets.map((market) => harness.relay.registry.get({ channel: 'book', market })!);
      const before = streams.map((stream) => stream.seq);
      harness.sim.tick();
      await waitFor('the relay to publish the tick', () => streams.every((s, j) => s.seq > before[j]!));
    }
  }

  /** The simulator only moves on a tick, so the relay's polls converge on its books. */
  async function expectBooksEqualUpstream(
    client: SseClient,
    markets: string[],
    depth: 10 | null,
  ): Promise<void> {
    for (const market of markets) {
      const expected = JSON.stringify(expectedBook(await upstreamBook(harness.sim, market), depth));
      await waitFor(`the client's book of ${market} to equal upstream's`, () =>
        JSON.stringify(client.view('book', market, depth)?.state) === expected ? true : undefined,
      );
      const relaySeq = harness.relay.registry.get({ channel: 'book', market, depth })!.seq;
      await waitFor(
        `the client at the relay's seq ${relaySeq}`,
        () => client.view('book', market, depth)!.seq === relaySeq,
      );
    }
  }

  it('streams depth-10 books equal to upstream, every stream event carrying every position', async () => {
    harness = await start({ sim: { markets: 3 } });
    const markets = harness.sim.market.marketIds();
    const client = await connect(`channel=book&depth=10&markets=${markets.join(',')}`);
    expect(client.status).toBe(200);
    await waitFor('three snapshots', () => client.of('snapshot').length === 3);
    expect(client.messages[0]).toMatchObject({ type: 'subscribed', channel: 'book', markets, depth: 10 });
    for (let round = 0; round < 5; round++) {
      harness.sim.tick();
      await expectBooksEqualUpstream(client, markets, 10);
    }
    expect(client.of('update').length).toBeGreaterThan(0);
    expect(client.violations).toEqual([]);
    // The last id lists each market's epoch and seq, in the order of the request.
    const positions = markets.map((market) => {
      const view = client.view('book', market, 10)!;
      return `${view.epoch}.${view.seq.toString(36)}`;
    });
    expect(client.lastEventId).toBe(positions.join(','));
    expect(client.ids.filter((id, i) => id === undefined && client.messages[i]!.type === 'update')).toEqual(
      [],
    );
  });

  it('streams prices equal to upstream', async () => {
    harness = await start({ sim: { markets: 2 } });
    const markets = harness.sim.market.marketIds();
    const client = await connect(`channel=price&markets=${markets[0]}&markets=${markets[1]}`);
    await waitFor('two snapshots', () => client.of('snapshot').length === 2);
    const upstream = await upstreamPrices(harness.sim, markets);
    for (const entry of upstream) {
      const { market_id, timestamp: _timestamp, ...prices } = entry;
      expect(client.view('price', market_id)!.state).toEqual(prices);
    }
  });

  it('resumes after a dropped connection from Last-Event-ID: the missed updates, no snapshot, no gap', async () => {
    harness = await start({ sim: { markets: 2 } });
    const markets = harness.sim.market.marketIds();
    const query = `channel=book&markets=${markets.join(',')}`;
    const first = await connect(query);
    await waitFor('snapshots', () => first.of('snapshot').length === 2);
    await tickAndWait(markets, 2);
    await waitFor('two updates per stream', () => first.of('update').length === 4);
    const before = markets.map((market) => ({ ...first.view('book', market)! }));
    await first.drop();

    await tickAndWait(markets, 3); // missed while away; the streams linger and keep polling

    const second = await connect(query, { 'last-event-id': first.lastEventId! });
    await waitFor('three replayed updates per stream', () => second.of('update').length === 6);
    expect(second.messages[0]).toMatchObject({
      type: 'subscribed',
      recovered: { [markets[0]!]: true, [markets[1]!]: true },
    });
    expect(second.of('snapshot')).toEqual([]);
    markets.forEach((market, i) => {
      const replayed = second.of('update').filter((m) => m.market === market);
      expect(replayed.map((m) => [m.epoch, m.seq])).toEqual(
        [1, 2, 3].map((k) => [before[i]!.epoch, before[i]!.seq + k]),
      );
    });
    // The replay applied to the books held before the drop gives upstream's books now.
    const { applyBookUpdate } = await import('../../packages/protocol/src/protocol/book.ts');
    for (const [i, market] of markets.entries()) {
      const resumed = second
        .of('update')
        .filter((m) => m.market === market)
        .reduce((book, m) => applyBookUpdate(book, m.data as BookState), before[i]!.state as BookState);
      expect(resumed).toEqual(expectedBook(await upstreamBook(harness.sim, market), null));
    }
  });

  it('falls back to snapshots (recovered = false) for an id it cannot resume from', async () => {
    harness = await start({ sim: { markets: 2 }, relay: { tuning: { resumeBufferSize: 1 } } });
    const markets = harness.sim.market.marketIds();
    const query = `channel=book&markets=${markets.join(',')}`;
    const first = await connect(query);
    await waitFor('snapshots', () => first.of('snapshot').length === 2);
    const oldId = first.lastEventId!;
    await first.drop();
    await tickAndWait(markets, 2); // more than the ring of 1 holds

    for (const id of [oldId, 'not an id', `${oldId},extra`]) {
      const client = await connect(query, { 'last-event-id': id });
      await waitFor('two snapshots', () => client.of('snapshot').length === 2);
      expect(client.messages[0]).toMatchObject({
        recovered: { [markets[0]!]: false, [markets[1]!]: false },
      });
      await expectBooksEqualUpstream(client, markets, null);
    }
  });

  it('answers bad requests with 400 and the protocol error code', async () => {
    harness = await start({ sim: { markets: 1 } });
    const [market] = harness.sim.market.marketIds();
    const cases: [string, string][] = [
      ['channel=book&markets=not-a-uuid', 'bad_request'],
      ['channel=book', 'bad_request'],
      [`channel=tickers&markets=${market}`, 'unknown_channel'],
      [`channel=price&depth=10&markets=${market}`, 'bad_request'],
      [`channel=book&depth=7&markets=${market}`, 'bad_request'],
    ];
    for (const [query, error] of cases) {
      const response = await fetch(`${harness.relay.url}/v1/sse?${query}`);
      expect(response.status, query).toBe(400);
      expect(await response.json()).toMatchObject({ error });
    }
    expect(harness.relay.sse.connections.size).toBe(0);
  });

  it('takes the API key by header or query, as the WebSocket does', async () => {
    harness = await start({ sim: { markets: 1 }, relay: { apiKeys: ['k1'] } });
    const [market] = harness.sim.market.marketIds();
    const query = `channel=price&markets=${market}`;
    expect((await connect(query)).status).toBe(401);
    expect((await connect(`${query}&token=wrong`)).status).toBe(401);
    expect((await connect(`${query}&token=k1`)).status).toBe(200);
    expect((await connect(query, { authorization: 'Bearer k1' })).status).toBe(200);
  });

  it('shares the connection limit with the WebSocket', async () => {
    harness = await start({ sim: { markets: 1 }, relay: { tuning: { maxConnections: 1 } } });
    const [market] = harness.sim.market.marketIds();
    const query = `channel=price&markets=${market}`;
    const first = await connect(query);
    expect(first.status).toBe(200);
    const ws = await ProtocolClient.connect(harness.relay.url);
    opened.push(ws);
    await waitFor('the WebSocket to be refused with 4029', () => ws.closeCode === 4029);
    await first.drop();
    await waitFor('the response to go', () => harness.relay.sse.connections.size === 0);
    const second = await ProtocolClient.connect(harness.relay.url);
    opened.push(second);
    expect((await connect(query)).status).toBe(503);
  });

  it('numbers its connections in one sequence with the WebSocket, so that no two share a number', async () => {
    harness = await start({ sim: { markets: 1 } });
    const [market] = harness.sim.market.marketIds();
    const { relay } = harness;
    for (let i = 0; i < 2; i += 1) {
      await connect(`channel=price&markets=${market}`);
      const ws = await ProtocolClient.connect(relay.url);
      opened.push(ws);
      await ws.request({ op: 'ping' });
    }
    await waitFor('two connections of each transport', () => relay.sse.connections.size === 2);
    const ids = [...relay.ws.connections, ...relay.sse.connections].map(({ id }) => id);
    expect(ids.sort((a, b) => a - b)).toEqual([1, 2, 3, 4]);
  });

  it('sends heartbeats as comment lines and ends every response on shutdown', async () => {
    harness = await start({ sim: { markets: 1 }, relay: { tuning: { heartbeatMs: 30 } } });
    const [market] = harness.sim.market.marketIds();
    const client = await connect(`channel=price&markets=${market}`);
    await waitFor(
      'two heartbeats',
      () => client.comments.filter((c) => c.startsWith('heartbeat')).length >= 2,
    );
    expect(client.messages.some((m) => m.type === 'heartbeat')).toBe(false);
    await harness.relay.close();
    await client.closedByRelay();
    expect(client.comments.at(-1)).toBe('relay shutting down');
  });

  it('releases the streams of a response the client dropped', async () => {
    harness = await start({ sim: { markets: 1 } });
    const [market] = harness.sim.market.marketIds();
    const client = await connect(`channel=price&markets=${market}`);
    await waitFor('a snapshot', () => client.of('snapshot').length === 1);
    const stream = harness.relay.registry.get({ channel: 'price', market: market! })!;
    expect(stream.subscribers.size).toBe(1);
    await client.drop();
    await waitFor('the subscription to go', () => stream.subscribers.size === 0);
    expect(harness.relay.sse.connections.size).toBe(0);
  });
});
