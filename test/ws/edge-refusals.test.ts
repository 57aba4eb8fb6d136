/**
 * Refusals at the edge that cannot be turned against everyone (docs/operations.md "Refusals"): idle
 * sockets from many addresses cannot lock new clients out (the least-sent are shed, answered 503),
 * a burst from one address gets HTTP answers, never resets, and key guessing is slowed then locked
 * out for that address only; every refusal counted by reason.
 */
import { once } from 'node:events';
import { type IncomingMessage, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RefusalReason } from '../../src/relay/events.ts';
import { edgeLimitsHarness } from '../support/edge-limits.ts';
import { type Harness, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

describe('edge refusals', () => {
  let harness: Harness;
  const { opened, start } = useHarness();

  function countRefusals(): Map<RefusalReason, number> {
    const counts = new Map<RefusalReason, number>();
    harness.relay.events.on('edge:refused', ({ reason }) =>
      counts.set(reason, (counts.get(reason) ?? 0) + 1),
    );
    return counts;
  }

  /** An HTTP GET on its own connection: the status, or the network error's code. */
  function get(path: string, localAddress = '127.0.0.1'): Promise<number | string> {
    const { port } = new URL(harness.relay.url);
    return new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port, path, localAddress, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
      req.end();
    });
  }

  /** A WebSocket upgrade: 'open', the refusal's HTTP status, or the network error's code. */
  function upgrade(
    headers: Record<string, string> = {},
    localAddress = '127.0.0.1',
  ): Promise<{ outcome: number | string; ws: WebSocket }> {
    const ws = new WebSocket(`${harness.relay.url.replace('http', 'ws')}/v1/ws`, { headers, localAddress });
    opened.push({ close: () => ws.terminate() });
    return new Promise((resolve) => {
      ws.once('open', () => resolve({ outcome: 'open', ws }));
      ws.once('unexpected-response', (_request, response: IncomingMessage) => {
        response.resume();
        resolve({ outcome: response.statusCode ?? 0, ws });
      });
      ws.once('error', (error: NodeJS.ErrnoException) =>
        resolve({ outcome: error.code ?? error.message, ws }),
      );
    });
  }

  it('keeps letting clients in while 60 addresses hold 20 idle sockets each', async () => {
    harness = await start(
      edgeLimitsHarness({ maxPendingConnections: 1_000, maxPendingPerAddress: 20, headersTimeoutMs: 10_000 }),
    );
    const refusals = countRefusals();
    const { port } = new URL(harness.relay.url);
    const idle: Socket[] = [];
    const answered: string[] = [];
    opened.push({
      close: () => {
        for (const socket of idle) socket.destroy();
      },
    });
    // One address's 20 at a time: 1,200 connects at once would overflow the listen backlog, and the
    // kernel's retries of the dropped ones can take longer than the test waits on a busy machine.
    for (let address = 1; address <= 60; address += 1) {
      const arriving: Promise<unknown>[] = [];
      for (let i = 0; i < 20; i += 1) {
        const socket = connect({ port: Number(port), host: '127.0.0.1', localAddress: `127.0.3.${address}` });
        socket.on('error', () => {});
        socket.on('data', (data) => answered.push(data.toString('latin1')));
        idle.push(socket);
        arriving.push(Promise.race([once(socket, 'connect'), once(socket, 'close')]));
      }
      await Promise.all(arriving);
    }
    await waitFor('every idle socket to arrive', () => idle.every((socket) => !socket.connecting));
    await waitFor('the pending set to overflow', () => (refusals.get('pending_shed') ?? 0) >= 200);

    const clients = await Promise.all(Array.from({ length: 25 }, () => upgrade()));
    const health = await Promise.all(Array.from({ length: 25 }, () => get('/health')));
    expect(clients.filter(({ outcome }) => outcome === 'open').length).toBeGreaterThanOrEqual(24);
    expect(health.filter((status) => status === 200).length).toBeGreaterThanOrEqual(24);
    // The shed sockets were told why, in HTTP.
    await waitFor('the shed sockets answered', () => answered.length > 0);
    expect(answered[0]).toMatch(/^HTTP\/1\.1 503 .*\r\nRetry-After: 1\r\n/s);
    expect(refusals.get('pending_shed')).toBeGreaterThanOrEqual(200);
  });

  it('answers every request of a burst from one address over its pending share, in HTTP', async () => {
    harness = await start(edgeLimitsHarness({ maxPendingPerAddress: 5 }));
    const refusals = countRefusals();
    const market = harness.sim.market.marketIds()[0]!;
    const statuses = await Promise.all(Array.from({ length: 50 }, () => get(`/v1/book/${market}`)));
    expect(statuses.every((status) => typeof status === 'number')).toBe(true);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThan(0);
    const refused = statuses.filter((status) => status === 429).length;
    expect(refused).toBe(refusals.get('pending_address') ?? 0);
    // An upgrade over the share is answered too.
    const sockets = await Promise.all(
      Array.from({ length: 5 }, () => {
        const socket = connect(Number(new URL(harness.relay.url).port), '127.0.0.1');
        socket.on('error', () => {});
        return once(socket, 'connect').then(() => socket);
      }),
    );
    opened.push({
      close: () => {
        for (const socket of sockets) socket.destroy();
      },
    });
    const { outcome } = await upgrade();
    expect(outcome).toBe(429);
  });

  it('slows down and then locks out key guessing from one address only', async () => {
    harness = await start(
      edgeLimitsHarness(
        { authFreeFailures: 10, authLockoutFailures: 30, authLockoutMs: 60_000 },
        { apiKeys: ['the-key'] },
      ),
    );
    const refusals = countRefusals();
    const outcomes: (number | string)[] = [];
    for (let batch = 0; batch < 25; batch += 1) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => upgrade({ authorization: `Bearer guess-${batch}` })),
      );
      outcomes.push(...answers.map(({ outcome }) => outcome));
    }
    expect(outcomes).toHaveLength(500);
    // 30, and one more for each failure forgiven meanwhile (10 a minute).
    const wrong = outcomes.filter((outcome) => outcome === 401).length;
    expect(wrong).toBeGreaterThanOrEqual(30);
    expect(wrong).toBeLessThan(40);
    expect(outcomes.slice(60).every((outcome) => outcome === 429)).toBe(true);
    expect(refusals.get('auth')).toBe(wrong);
    expect(refusals.get('auth_lockout')).toBe(500 - wrong);
    const metrics = await (await fetch(`${harness.relay.url}/metrics`)).text();
    expect(metrics).toContain(`market_relay_connections_refused_total{reason="auth_lockout"} ${500 - wrong}`);
    expect(metrics).toContain(`market_relay_connections_refused_total{reason="auth"} ${wrong}`);
    // A valid key from another address connects: that address is not locked out (it would get 429),
    // and a valid key is never delayed (only wrong ones are: test/relay/admission's throttle tests,
    // on a clock of their own, not this machine's speed).
    const { outcome } = await upgrade({ authorization: 'Bearer the-key' }, '127.0.0.2');
    expect(outcome).toBe('open');
  });
});
