/**
 * A rolling upgrade (docs/cluster.md "Upgrades"): relays of this release and of the next share one
 * Redis (and a Redis Cluster where redis-cli is). The next release is played by a relay given a
 * test-only format 3 (its values base64, so this release cannot read them; never shipped): it reads
 * this release's format and writes its own. Through a lease hand-over each way (the holder shuts
 * down, as in a deploy) nothing crashes, the relay of this release counts what it cannot read, and
 * the clients of both relays keep books equal to upstream's.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type FormattedKind,
  type RedisFormat,
  shippedFormats,
} from '../../../src/relay/coordination/redis/formats.ts';
import type { Relay } from '../../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import { MessageRecorder } from '../../support/clients/message-recorder.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { type RedisDeployment, redisDeployments, startRedisDeployment } from '../../support/cluster/redis.ts';
import { expectedBook, startHarnessRelay, upstreamBook } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

/** The next release's format, as far as this release can tell: one it does not know, of every kind. */
const nextFormat: RedisFormat = {
  version: shippedFormats.at(-1)!.version + 1,
  changes: ['message', 'state', 'history', 'budget'],
  encode: (_kind, text) => Buffer.from(text).toString('base64'),
  decode: (_kind, text) => Buffer.from(text, 'base64').toString(),
};
const NEXT_RELEASE = [...shippedFormats, nextFormat];

describe.each(redisDeployments())('relays of adjacent formats on %s redis', (kind) => {
  let redis: RedisDeployment;
  let sim: SimulatorHandle;
  const relays: Relay[] = [];
  const clients: ProtocolClient[] = [];

  beforeAll(async () => {
    [redis, sim] = await Promise.all([
      startRedisDeployment(kind),
      startSimulator({ markets: 4, seed: 11, tickMs: 0, tradeFlow: () => undefined }),
    ]);
  }, 20_000);
  afterAll(async () => {
    await Promise.all([redis?.stop(), sim?.close()]);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await Promise.all(relays.splice(0).map((relay) => relay.close()));
  });

  /** A relay of this release, or of the next when given its formats. */
  async function relay(formats?: readonly RedisFormat[]): Promise<Relay> {
    const started = await startHarnessRelay(sim, {
      redis: redis.spec,
      bookPollMs: 50,
      pricePollMs: 50,
      ...(formats === undefined ? {} : { redisFormats: formats }),
      tuning: { rebalanceMs: 500 },
    });
    relays.push(started);
    return started;
  }

  async function stop(of: Relay): Promise<void> {
    relays.splice(relays.indexOf(of), 1);
    await of.close(); // as on SIGTERM: its leases released, the roster left
  }

  /** A client of every book of `markets` on `of`; one `movedFrom` another relay resumes what it saw there. */
  async function viewer(of: Relay, markets: string[], movedFrom?: ProtocolClient): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(of.url, { perMessageDeflate: false });
    clients.push(client);
    if (movedFrom === undefined) {
      await client.request({ op: 'subscribe', channel: 'book', markets });
      return client;
    }
    const resume: Record<string, { epoch: string; seq: number }> = {};
    for (const market of markets) {
      const view = movedFrom.view('book', market)!;
      client.streams.set(MessageRecorder.key('book', market), { ...view, updates: 0 });
      resume[market] = { epoch: view.epoch, seq: view.seq };
    }
    await client.request({ op: 'subscribe', channel: 'book', markets, resume });
    return client;
  }

  /** Upstream changes `rounds` times; each time every viewer's every book comes to equal upstream's. */
  async function expectServed(viewers: ProtocolClient[], markets: string[], rounds = 3): Promise<void> {
    for (let round = 0; round < rounds; round++) {
      sim.tick();
      for (const market of markets) {
        const book = await upstreamBook(sim, market);
        const ts = new Date(book.timestamp).toISOString();
        for (const [i, client] of viewers.entries())
          await waitFor(`round ${round}: viewer ${i} has ${market} at ${ts}`, () => {
            const view = client.view('book', market);
            return view?.ts === ts && JSON.stringify(view.state) === JSON.stringify(expectedBook(book, null));
          });
      }
    }
    for (const client of viewers) expect(client.violations).toEqual([]);
  }

  async function skipped(of: Relay): Promise<Partial<Record<FormattedKind, number>>> {
    const text = await (await fetch(`${of.url}/metrics`)).text();
    const counts: Partial<Record<FormattedKind, number>> = {};
    for (const [, kind, count] of text.matchAll(
      /^market_relay_redis_unknown_format_total\{kind="(\w+)"\} (\S+)$/gm,
    ))
      counts[kind as FormattedKind] = Number(count);
    return counts;
  }

  const epochs = (client: ProtocolClient, markets: string[]) =>
    markets.map((market) => client.view('book', market)?.epoch);

  it("hands this release's leases to the next: it continues their streams; this release polls for itself", async () => {
    const markets = sim.market.marketIds().slice(0, 2);
    const current = await relay();
    const onCurrent = await viewer(current, markets);
    await waitFor('the relay of this release holding every book', () => current.broker.status().owned === 2);
    const next = await relay(NEXT_RELEASE);
    const onNext = await viewer(next, markets);
    await expectServed([onCurrent, onNext], markets, 1);
    // The next release reads this one's messages: its client is in the cluster's epochs.
    expect(epochs(onNext, markets)).toEqual(epochs(onCurrent, markets));

    await stop(current);
    await waitFor('the next release holding every book', () => next.broker.status().owned === 2);
    // What the stopped relay's client saw has reached the next release's streams too.
    await waitFor('the next release at the positions the moved client saw', () =>
      markets.every((market) => onNext.view('book', market)!.seq >= onCurrent.view('book', market)!.seq),
    );
    const moved = await viewer(next, markets, onCurrent);
    // It continued from the state this release left (no new epoch), and resumed its client.
    await expectServed([onNext, moved], markets);
    expect(epochs(onNext, markets)).toEqual(epochs(onCurrent, markets));
    expect(moved.of('snapshot')).toEqual([]);

    // A relay of this release joining now reads neither the stored state nor the holder's messages:
    // it polls for itself, while the leases stay with the holder (spread within a release only).
    const joining = await relay();
    const onJoining = await viewer(joining, markets);
    await expectServed([onNext, moved, onJoining], markets);
    const counts = await skipped(joining);
    expect(counts.state).toBeGreaterThan(0);
    expect(counts.message).toBeGreaterThan(0);
    expect(next.broker.status()).toMatchObject({ owned: 2, relays: 1 });
    expect(await skipped(next)).toEqual({ message: 0, state: 0, history: 0, roster: 0, budget: 0 });
  }, 20_000);

  it("hands the next release's leases to this one: a new epoch, and clients of both served", async () => {
    const markets = sim.market.marketIds().slice(2, 4);
    const next = await relay(NEXT_RELEASE);
    const onNext = await viewer(next, markets);
    await waitFor('the relay of the next release holding every book', () => next.broker.status().owned === 2);
    const current = await relay();
    const onCurrent = await viewer(current, markets);
    // This release reads none of the holder's messages: it polls for itself, in epochs of its own.
    await expectServed([onNext, onCurrent], markets, 1);
    const before = epochs(onCurrent, markets);
    expect(before).not.toEqual(epochs(onNext, markets));

    await stop(next);
    // Its streams leave their own epochs for new ones of the cluster's (the stored state unreadable).
    await waitFor('this release holding every book', () =>
      epochs(onCurrent, markets).every((epoch, m) => epoch !== before[m]),
    );
    // Its client resumes here: the history is of a format not read, so a snapshot, not a guess.
    const moved = await viewer(current, markets, onNext);
    await expectServed([onCurrent, moved], markets);
    expect(moved.of('snapshot')).toHaveLength(markets.length);
    expect(epochs(moved, markets)).toEqual(epochs(onCurrent, markets));
    const counts = await skipped(current);
    expect(counts.message).toBeGreaterThan(0);
    expect(counts.state).toBeGreaterThan(0);
    expect(counts.roster).toBeGreaterThan(0);
    // The budget's bucket in the next format: this release kept to its share by itself meanwhile.
    expect(counts.budget).toBeGreaterThan(0);

    // The next release, back, reads this release's writes and follows them.
    const back = await relay(NEXT_RELEASE);
    const onBack = await viewer(back, markets);
    await expectServed([onCurrent, moved, onBack], markets);
    expect(epochs(onBack, markets)).toEqual(epochs(onCurrent, markets));
  }, 20_000);
});
