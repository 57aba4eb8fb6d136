/**
 * `market-relay serve --workers 2` as an operator runs it (docs/operations.md "Every core of a
 * machine"): two relay processes share one port and a redis-server the primary starts for them.
 * WebSocket and SSE clients land on both workers and each gets its stream whole; upstream sees each market's book
 * polled once per poll interval for the machine, not once per worker; a client resumes its book on
 * the other worker; SIGTERM to the primary closes every worker's clients with 1001 and removes the
 * private Redis.
 */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { SseClient } from '../../support/clients/sse-client.ts';
import { type ChildRelay, startChildRelay } from '../../support/cluster/child-relay.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { waitFor } from '../../support/wait-for.ts';

const BOOK_POLL_MS = 200;
/** The workers' drain window on SIGTERM (docs/operations.md "Shutdown"), short for the test. */
const DRAIN_MS = 500;
/** The workers' metrics are read this often while waiting on them. */
const METRICS_POLL = { timeoutMs: 10_000, everyMs: 50 };

describe.skipIf(!redisAvailable())('serve --workers 2', () => {
  let sim: SimulatorHandle;
  let relay: ChildRelay | undefined;
  const clients: ProtocolClient[] = [];

  beforeAll(async () => {
    sim = await startSimulator({ markets: 3, seed: 5, tickMs: 100 });
  });
  afterAll(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    // SIGTERM, not SIGKILL, after a failure too: the primary then stops the Redis it started.
    await relay?.stop('SIGTERM');
    await sim.close();
  });

  /** Open WebSocket connections per worker, from each worker's own operator port. */
  async function connectionsPerWorker(operatorUrls: string[]): Promise<number[]> {
    return Promise.all(
      operatorUrls.map(async (url) => {
        const text = await (await fetch(`${url}/metrics`)).text();
        return Number(/^market_relay_connections (\d+)$/m.exec(text)?.[1]);
      }),
    );
  }

  async function connect(url: string): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(url);
    clients.push(client);
    return client;
  }

  it('shares the port, polls each market once per interval, resumes across workers, drains on SIGTERM', async () => {
    relay = await startChildRelay([
      `--upstream=${sim.url}`,
      '--workers=2',
      '--operator-port=0',
      `--book-poll-ms=${BOOK_POLL_MS}`,
      '--price-poll-ms=1000',
      '--scheduler=round-robin',
      '--upstream-rps=1000',
      '--lease-ms=600',
      `--drain-ms=${DRAIN_MS}`,
      '--log-level=warn',
    ]);
    const started = relay;
    const output = started.output();
    const operatorUrls = [1, 2].map(
      (n) => new RegExp(`worker ${n} operator endpoints: (\\S+)`).exec(output)?.[1],
    );
    expect(operatorUrls).toEqual([expect.stringMatching(/^http:/), expect.stringMatching(/^http:/)]);
    const operators = operatorUrls as string[];
    const socket = /a redis-server of their own \((\S+)\)/.exec(output)?.[1];
    expect(socket !== undefined && existsSync(socket)).toBe(true);

    // Six clients over three markets: the shared port hands them to both workers.
    const markets = sim.market.marketIds();
    const viewers = await Promise.all(markets.flatMap(() => [connect(started.url), connect(started.url)]));
    await Promise.all(
      viewers.map((viewer, i) =>
        viewer.request({ op: 'subscribe', channel: 'book', markets: [markets[i % markets.length]!] }),
      ),
    );
    const perWorker = await waitFor(
      'six connections over both workers',
      async () => {
        const counts = await connectionsPerWorker(operators);
        return counts[0]! + counts[1]! === 6 ? counts : undefined;
      },
      METRICS_POLL,
    );
    expect(perWorker.every((count) => count > 0)).toBe(true);
    await waitFor(
      'every client to have its snapshot and three updates',
      () =>
        viewers.every((viewer, i) => (viewer.view('book', markets[i % markets.length]!)?.updates ?? 0) >= 3),
      { timeoutMs: 15_000 },
    );
    for (const viewer of viewers) expect(viewer.violations).toEqual([]);

    // Server-Sent Events through the shared port too: two requests, one per worker in turn.
    const sse = await Promise.all(
      [0, 1].map((i) => SseClient.connect(`${started.url}/v1/sse?channel=book&markets=${markets[i]}`)),
    );
    await waitFor('both SSE clients to have their snapshot and an update', () =>
      sse.every((client, i) => (client.view('book', markets[i]!)?.updates ?? 0) >= 1),
    );
    for (const client of sse) expect(client.violations).toEqual([]);
    await Promise.all(sse.map((client) => client.close()));

    // Once per interval for the machine: two workers polling each for itself would double it.
    sim.clearRequests();
    const from = Date.now();
    await delay(2_000); // the window the polls are counted over, not a wait for a condition
    const elapsed = Date.now() - from;
    const polls = sim.requests.filter((entry) => entry.path === '/clob/orderbook');
    for (const market of markets) {
      const count = polls.filter((entry) => entry.query.market_id === market).length;
      expect(count).toBeGreaterThan(0);
      expect(count).toBeLessThanOrEqual(Math.ceil(elapsed / BOOK_POLL_MS) + 2);
    }

    // Resume: leave one worker at a known seq, come back on the other.
    const market = markets[0]!;
    const leaver = viewers[0]!;
    const { epoch, seq } = leaver.view('book', market)!;
    const before = await connectionsPerWorker(operators);
    await leaver.close();
    const left = await waitFor(
      'the leaver gone',
      async () => {
        const counts = await connectionsPerWorker(operators);
        const index = counts.findIndex((count, i) => count === before[i]! - 1);
        return index === -1 ? undefined : { index, counts };
      },
      METRICS_POLL,
    );
    let returner: ProtocolClient | undefined;
    for (let attempt = 0; attempt < 6 && returner === undefined; attempt++) {
      const candidate = await connect(started.url);
      const counts = await waitFor(
        'the new connection counted',
        async () => {
          const now = await connectionsPerWorker(operators);
          return now[0]! + now[1]! === left.counts[0]! + left.counts[1]! + attempt + 1 ? now : undefined;
        },
        METRICS_POLL,
      );
      // Round-robin: the next connection after one on the leaver's worker lands on the other.
      if (counts[1 - left.index]! > left.counts[1 - left.index]!) returner = candidate;
    }
    expect(returner).toBeDefined();
    const reply = await returner!.request({
      op: 'subscribe',
      channel: 'book',
      markets: [market],
      resume: { [market]: { epoch, seq } },
    });
    expect(reply).toMatchObject({ type: 'subscribed', recovered: { [market]: true } });
    const replayed = await waitFor('updates after the resume point', () => {
      const updates = returner!.of('update');
      return updates.length >= 2 ? updates : undefined;
    });
    expect(returner!.of('snapshot')).toEqual([]);
    expect(replayed.slice(0, 2).map((m) => [m.epoch, m.seq])).toEqual([
      [epoch, seq + 1],
      [epoch, seq + 2],
    ]);

    // SIGTERM to the primary drains every worker, then stops the private Redis.
    const stayed = viewers.slice(1);
    const sentAt = Date.now();
    await started.stop('SIGTERM');
    expect(Date.now() - sentAt).toBeLessThan(DRAIN_MS + 5_000);
    expect(started.process.exitCode).toBe(0);
    await waitFor('every client closed', () =>
      [...stayed, returner!].every((c) => c.closeCode !== undefined),
    );
    expect(new Set([...stayed, returner!].map((c) => c.closeCode))).toEqual(new Set([1001]));
    expect(existsSync(dirname(socket!))).toBe(false);
  }, 40_000); // three processes start (the primary, two workers): seconds on a busy machine
});
