/**
 * Cluster-wide streams end to end: three relay processes on one private Redis and the simulator.
 * A stream's epoch and seq are the same on every relay, so a client that leaves a relay (SIGTERM,
 * a rolling restart, a crash of the relay polling its market) resumes on another with
 * `recovered: true`, no snapshot and no gap; Redis restarted is survived. Intervals and leases are
 * short (options), so the whole file stays within seconds of relay start-ups.
 */
import { Redis } from 'ioredis';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { COMPACT_SUBPROTOCOL } from '../../src/protocol/compact.ts';
import { type SimulatorHandle, startSimulator } from '../../src/sim/server.ts';
import { targetKeys } from '../../src/util/keys.ts';
import { type ChildRelay, startChildRelay } from '../support/child-relay.ts';
import { type Message, ProtocolClient } from '../support/protocol-client.ts';
import { redisAvailable, useRedis } from '../support/redis.ts';
import { waitFor } from '../support/wait-for.ts';

interface Selection {
  channel: 'book' | 'price';
  markets: string[];
  depth?: 10 | null;
}

describe.skipIf(!redisAvailable())('cluster-wide streams', () => {
  const redis = useRedis();
  let sim: SimulatorHandle;
  let markets: string[];
  const relays: ChildRelay[] = [];
  const clients: ProtocolClient[] = [];
  beforeAll(async () => {
    sim = await startSimulator({ markets: 4, seed: 11, tickMs: 40 });
    markets = sim.market.marketIds();
    return async () => {
      await sim.close();
    };
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await Promise.all(relays.splice(0).map((relay) => relay.stop('SIGKILL')));
  });

  async function relay(): Promise<ChildRelay> {
    const started = await startChildRelay([
      `--upstream=${sim.url}`,
      `--redis=${redis.server.url}`,
      '--book-poll-ms=50',
      '--price-poll-ms=50',
      '--upstream-rps=1000',
      '--lease-ms=600',
      '--linger-ms=2000',
    ]);
    relays.push(started);
    return started;
  }

  /** Every stream of the selections a client holds: full books, a depth-10 book, prices. */
  const selections = (watched: string[]): Selection[] => [
    { channel: 'book', markets: watched, depth: null },
    { channel: 'book', markets: [watched[0]!], depth: 10 },
    { channel: 'price', markets: watched },
  ];

  function viewsOf(client: ProtocolClient, watched: Selection[]) {
    return watched.flatMap((selection) =>
      selection.markets.map((market) => client.view(selection.channel, market, selection.depth)),
    );
  }

  async function subscribe(
    at: ChildRelay,
    watched: Selection[],
    protocols: string[] = [],
  ): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(at.url, {}, protocols);
    clients.push(client);
    for (const selection of watched) await client.request({ op: 'subscribe', ...selection });
    await waitFor('first snapshots', () => viewsOf(client, watched).every((view) => view !== undefined));
    return client;
  }

  /**
   * The client leaves and resumes every stream on `to` from where it stood. Returns the new client
   * (its views carried over, so any gap is a violation) and the `subscribed` answers.
   */
  async function move(
    from: ProtocolClient,
    to: ChildRelay,
    watched: Selection[],
    protocols: string[] = [],
  ): Promise<{ client: ProtocolClient; answers: Message[] }> {
    const client = await ProtocolClient.connect(to.url, {}, protocols);
    clients.push(client);
    for (const [key, view] of from.streams) client.streams.set(key, { ...view, updates: 0 });
    const answers: Message[] = [];
    for (const selection of watched) {
      const resume = Object.fromEntries(
        selection.markets.map((market) => {
          // The copy: `from` may still be receiving (its relay was not stopped).
          const view = client.view(selection.channel, market, selection.depth)!;
          return [market, { epoch: view.epoch, seq: view.seq }];
        }),
      );
      answers.push(await client.request({ op: 'subscribe', ...selection, resume }));
    }
    return { client, answers };
  }

  const allRecovered = (answers: Message[]) =>
    answers.flatMap((answer) => Object.values(answer.recovered as Record<string, boolean>));

  /** Waits until every full book of `watched` has moved `by` updates past what `client` has now. */
  async function progress(client: ProtocolClient, watched: Selection[], by = 3): Promise<void> {
    const books = watched[0]!;
    const from = books.markets.map((market) => client.view('book', market, null)!.seq);
    await waitFor(`${by} more updates`, () =>
      books.markets.every((market, i) => client.view('book', market, null)!.seq >= from[i]! + by),
    );
  }

  it('resumes a client of a relay stopped with SIGTERM on another relay: recovered, no snapshot, no gap', async () => {
    const [a, b] = await Promise.all([relay(), relay(), relay()]);
    const watched = selections(markets.slice(0, 2));
    // Market 0 is watched on b too (its ring has it); market 1 only on a (b starts it from Redis).
    await subscribe(b, selections(markets.slice(0, 1)));
    // In the compact encoding: messages from Redis go out with the serving relay's stream numbers.
    const leaving = await subscribe(a, watched, [COMPACT_SUBPROTOCOL]);
    await progress(leaving, watched);
    await a.stop('SIGTERM');
    expect(leaving.closeCode).toBe(1001);
    const { client, answers } = await move(leaving, b, watched, [COMPACT_SUBPROTOCOL]);
    expect(allRecovered(answers)).toEqual([true, true, true, true, true]);
    await progress(client, watched);
    expect(client.of('snapshot')).toEqual([]);
    expect([...leaving.violations, ...client.violations]).toEqual([]);
    expect([leaving.compactMessages, client.compactMessages].every((count) => count > 0)).toBe(true);
  });

  it('resends no snapshot to resuming clients through a rolling restart of all three relays', async () => {
    const trio = await Promise.all([relay(), relay(), relay()]);
    const watched = selections(markets.slice(1, 3));
    let placed = await Promise.all(
      trio.flatMap((at) => [subscribe(at, watched), subscribe(at, selections(markets.slice(2, 4)))]),
    );
    const where = placed.map((_, i) => Math.floor(i / 2));
    const watchedBy = placed.map((_, i) => (i % 2 === 0 ? watched : selections(markets.slice(2, 4))));
    let resent = 0;
    let recovered = 0;
    for (let i = 0; i < trio.length; i++) {
      await Promise.all(placed.map((client, c) => progress(client, watchedBy[c]!, 2)));
      await trio[i]!.stop('SIGTERM');
      const replacement = relay(); // starts while the clients move
      const next = (i + 1) % trio.length;
      placed = await Promise.all(
        placed.map(async (client, c) => {
          if (where[c] !== i) return client;
          where[c] = next;
          const moved = await move(client, trio[next]!, watchedBy[c]!);
          recovered += allRecovered(moved.answers).filter(Boolean).length;
          return moved.client;
        }),
      );
      trio[i] = await replacement;
    }
    await Promise.all(placed.map((client, c) => progress(client, watchedBy[c]!, 2)));
    for (const client of clients) resent += client.of('snapshot').length;
    // Every client was placed once (6 x 5 first snapshots), then moved without any snapshot.
    expect(resent).toBe(6 * 5);
    // Relay 0's clients moved three times, relay 1's twice, relay 2's once: 12 moves of 5 streams.
    expect(recovered).toBe(12 * 5);
    expect(clients.flatMap((client) => client.violations)).toEqual([]);
  }, 90_000);

  it('keeps epoch and seq continuous on the other relays when the polling relay is killed', async () => {
    const trio = await Promise.all([relay(), relay(), relay()]);
    const watched = selections(markets.slice(0, 1));
    const viewers = await Promise.all(trio.map((at) => subscribe(at, watched)));
    const inspector = new Redis(redis.server.url);
    try {
      const lease = await waitFor('a holder', () => inspector.get(targetKeys(`book:${markets[0]}`).lease));
      const instances = await Promise.all(trio.map((at) => at.instance()));
      const holder = instances.findIndex((instance) => lease?.startsWith(`${instance} `));
      expect(holder).toBeGreaterThanOrEqual(0);
      const survivors = viewers.filter((_, i) => i !== holder);
      const epochs = survivors.map((viewer) => viewer.view('book', markets[0]!, null)!.epoch);
      await trio[holder]!.stop('SIGKILL'); // no shutdown, no release: the lease runs out
      for (const viewer of survivors) await progress(viewer, watched, 5);
      expect(survivors.map((viewer) => viewer.view('book', markets[0]!, null)!.epoch)).toEqual(epochs);
      expect(survivors.flatMap((viewer) => viewer.of('snapshot'))).toHaveLength(2 * 3);
      expect(survivors.flatMap((viewer) => viewer.violations)).toEqual([]);
      const newHolder = await inspector.get(targetKeys(`book:${markets[0]}`).lease);
      expect(newHolder?.startsWith(`${instances[holder]} `)).toBe(false);
    } finally {
      inspector.disconnect();
    }
  });

  it('survives Redis restarted: serving throughout, then one numbering again, resumable anywhere', async () => {
    const [a, b] = await Promise.all([relay(), relay()]);
    const watched = selections(markets.slice(0, 1));
    const [onA, onB] = [await subscribe(a, watched), await subscribe(b, watched)];
    const redisUp = async (at: ChildRelay) =>
      ((await (await fetch(`${at.url}/health`)).json()) as { redis: { connected: boolean } }).redis.connected;
    await redis.server.stop();
    await waitFor('both relays to see Redis gone', async () => !(await redisUp(a)) && !(await redisUp(b)));
    await progress(onA, watched);
    await progress(onB, watched);
    await redis.start();
    await waitFor('both relays back on Redis', async () => (await redisUp(a)) && (await redisUp(b)), {
      timeoutMs: 15_000,
    });
    const same = () => {
      const [x, y] = [onA.view('book', markets[0]!, null)!, onB.view('book', markets[0]!, null)!];
      return x.epoch === y.epoch;
    };
    await waitFor('one epoch on both relays', same, { timeoutMs: 10_000 });
    await progress(onA, watched);
    const { client, answers } = await move(onA, b, watched);
    expect(allRecovered(answers)).toEqual([true, true, true]);
    await progress(client, watched);
    expect(client.of('snapshot')).toEqual([]);
    expect([...onA.violations, ...onB.violations, ...client.violations]).toEqual([]);
  });
});
