/**
 * @module test/support/cluster/mixed-formats
 * Relays of two releases on one Redis, as in a rolling upgrade (docs/cluster.md "Upgrades"): this
 * release's, and the next one's played by a relay given a test-only format (`nextRelease`, never
 * shipped) that lays out anew the kinds it names, as base64 so this release cannot read them. A
 * private Redis (or Redis Cluster) and a quiet simulator per test file; the relays and clients a
 * test starts are closed after it.
 */
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { RedisTopology } from '../../../src/relay/coordination/redis/connection.ts';
import {
  type FormattedKind,
  type LaidOutKind,
  type RedisFormat,
  shippedFormats,
} from '../../../src/relay/coordination/redis/formats.ts';
import type { Relay } from '../../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import { MessageRecorder } from '../clients/message-recorder.ts';
import { ProtocolClient } from '../clients/protocol-client.ts';
import { expectedBook, startHarnessRelay, upstreamBook } from '../harness.ts';
import { waitFor } from '../wait-for.ts';
import { type RedisDeployment, startRedisDeployment } from './redis.ts';

/** The formats of the next release, whose own format lays out `changes` anew (as base64). */
export function nextRelease(changes: readonly LaidOutKind[]): readonly RedisFormat[] {
  const next: RedisFormat = {
    version: shippedFormats.at(-1)!.version + 1,
    changes,
    encode: (_kind, text) => Buffer.from(text).toString('base64'),
    decode: (_kind, text) => Buffer.from(text, 'base64').toString(),
  };
  return [...shippedFormats, next];
}

export interface MixedFormatRelays {
  readonly sim: SimulatorHandle;
  /** A relay of this release, or of another when given its formats. */
  relay(formats?: readonly RedisFormat[]): Promise<Relay>;
  /** Closes `of` as on SIGTERM: its leases released, the roster left. */
  stop(of: Relay): Promise<void>;
  /** A client of every book of `markets` on `of`; one `movedFrom` another relay resumes what it saw there. */
  viewer(of: Relay, markets: string[], movedFrom?: ProtocolClient): Promise<ProtocolClient>;
  /** Upstream changes `rounds` times; each time every viewer's every book comes to equal upstream's. */
  expectServed(viewers: ProtocolClient[], markets: string[], rounds?: number): Promise<void>;
  /** What `of` skipped, by kind, as its /metrics says. */
  skipped(of: Relay): Promise<Partial<Record<FormattedKind, number>>>;
}

/** The epoch of each book of `markets` `client` has. */
export function epochs(client: ProtocolClient, markets: string[]): (string | undefined)[] {
  return markets.map((market) => client.view('book', market)?.epoch);
}

export function useMixedFormatRelays(kind: RedisTopology['kind']): MixedFormatRelays {
  let redis: RedisDeployment;
  let sim: SimulatorHandle;
  const relays: Relay[] = [];
  const clients: ProtocolClient[] = [];

  beforeAll(async () => {
    [redis, sim] = await Promise.all([
      startRedisDeployment(kind),
      startSimulator({ markets: 6, seed: 11, tickMs: 0, tradeFlow: () => undefined }),
    ]);
  }, 20_000);
  afterAll(async () => {
    await Promise.all([redis?.stop(), sim?.close()]);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await Promise.all(relays.splice(0).map((relay) => relay.close()));
  });

  return {
    get sim() {
      return sim;
    },
    async relay(formats) {
      const started = await startHarnessRelay(sim, {
        redis: redis.spec,
        bookPollMs: 50,
        pricePollMs: 50,
        ...(formats === undefined ? {} : { redisFormats: formats }),
        tuning: { rebalanceMs: 500 },
      });
      relays.push(started);
      return started;
    },
    async stop(of) {
      relays.splice(relays.indexOf(of), 1);
      await of.close();
    },
    async viewer(of, markets, movedFrom) {
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
    },
    async expectServed(viewers, markets, rounds = 2) {
      for (let round = 0; round < rounds; round++) {
        sim.tick();
        for (const market of markets) {
          const book = await upstreamBook(sim, market);
          const ts = new Date(book.timestamp).toISOString();
          const expected = JSON.stringify(expectedBook(book, null));
          for (const [i, client] of viewers.entries())
            await waitFor(`round ${round}: viewer ${i} has ${market} at ${ts}`, () => {
              const view = client.view('book', market);
              return view?.ts === ts && JSON.stringify(view.state) === expected;
            });
        }
      }
      for (const client of viewers) expect(client.violations).toEqual([]);
    },
    async skipped(of) {
      const text = await (await fetch(`${of.url}/metrics`)).text();
      const counts: Partial<Record<FormattedKind, number>> = {};
      for (const [, counted, count] of text.matchAll(
        /^market_relay_redis_unknown_format_total\{kind="(\w+)"\} (\S+)$/gm,
      ))
        counts[counted as FormattedKind] = Number(count);
      return counts;
    },
  };
}
