/**
 * A relay pointed at something that is not upstream (a wrong base path on the right host, or another
 * service altogether) must say so: `/health` 503 `upstream_misconfigured` within 15 s, a clear log
 * line, subscriptions `stale` / `upstream_unavailable`, never `unknown_market` for a real market,
 * and nothing public that names an address or a path.
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type Relay, startRelay } from '../../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { waitFor } from '../../support/wait-for.ts';

describe('upstream identity', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  async function simulator(): Promise<SimulatorHandle> {
    const sim = await startSimulator({ markets: 4, seed: 5, tickMs: 0 });
    closers.push(() => sim.close());
    return sim;
  }

  async function relay(upstream: string, lines: string[] = []): Promise<Relay> {
    const logger = pino(
      { level: 'info' },
      {
        write: (line: string) => {
          lines.push(line);
        },
      },
    );
    const started = await startRelay(
      {
        port: 0,
        host: '127.0.0.1',
        upstream,
        bookPollMs: 50,
        pricePollMs: 50,
        upstreamConcurrency: 4,
        upstreamRps: 200,
        logLevel: 'info',
        simMarkets: 0,
        simSeed: 1,
        tuning: { upstreamRetries: 0, upstreamTimeoutMs: 1_000 },
      },
      logger,
    );
    closers.push(() => started.close());
    return started;
  }

  async function expectMisconfigured(target: Relay, market: string, lines: string[]) {
    const client = await ProtocolClient.connect(target.url);
    closers.push(() => client.close());
    await client.request({ op: 'subscribe', channel: 'book', markets: [market] });
    await client.request({ op: 'subscribe', channel: 'price', markets: [market] });

    const health = await waitFor(
      '/health 503',
      async () => {
        const response = await fetch(`${target.url}/health`);
        return response.status === 503 ? ((await response.json()) as Record<string, unknown>) : undefined;
      },
      { timeoutMs: 15_000, everyMs: 100 },
    );
    expect(health).toMatchObject({ status: 'upstream_misconfigured', upstream: { identity: 'mismatch' } });
    await waitFor('both streams reported unavailable', () => client.of('error').length >= 2, {
      timeoutMs: 15_000,
    });
    const errors = client.of('error');
    expect(errors.map((error) => error.code)).not.toContain('unknown_market');
    expect(errors.every((error) => error.code === 'upstream_unavailable')).toBe(true);
    expect(client.of('status').every((status) => status.state === 'stale')).toBe(true);
    // Public words only: no address, port or path of upstream.
    const published = JSON.stringify(client.messages);
    expect(published).not.toMatch(/127\.0\.0\.1|ECONN|\/v2|\/clob|\/health/);
    expect(lines.some((line) => line.includes('"event":"upstream_misconfigured"'))).toBe(true);
  }

  it('reports a wrong base path as upstream misconfigured, never unknown_market', async () => {
    const sim = await simulator();
    const lines: string[] = [];
    const wrong = await relay(`${sim.url}/v2`, lines);
    await expectMisconfigured(wrong, sim.market.marketIds()[0]!, lines);
  });

  it('reports a service that is not upstream (another relay) as upstream misconfigured', async () => {
    const sim = await simulator();
    const real = await relay(sim.url);
    const lines: string[] = [];
    const confused = await relay(real.url, lines);
    await expectMisconfigured(confused, sim.market.marketIds()[0]!, lines);
  });

  it('tells a redirecting upstream from an unreachable one: misconfigured, reachable, the redirect named', async () => {
    const sim = await startSimulator({ markets: 4, seed: 5, tickMs: 0, profile: 'redirect' });
    closers.push(() => sim.close());
    const lines: string[] = [];
    const redirected = await relay(sim.url, lines);
    const health = await waitFor(
      '/health 503 misconfigured',
      async () => {
        const response = await fetch(`${redirected.url}/health`);
        const body = (await response.json()) as { status: string; upstream: Record<string, unknown> };
        return response.status === 503 && body.upstream.reachable === true ? body : undefined;
      },
      { timeoutMs: 15_000, everyMs: 100 },
    );
    expect(health).toMatchObject({
      status: 'upstream_misconfigured',
      upstream: {
        reachable: true,
        identity: 'mismatch',
        problem: `GET /health: HTTP 301: redirect to ${sim.url.replace('http:', 'https:')}/health`,
      },
    });
    expect(await (await fetch(`${redirected.url}/readyz`)).json()).toEqual({
      status: 'not_ready',
      reason: 'upstream_misconfigured',
    });
    // Followed nowhere: every request the relay made was answered 301 by the simulator itself.
    expect(sim.requests.every((request) => request.status === 301)).toBe(true);
  });

  it('still answers unknown_market for a market a real upstream does not have', async () => {
    const sim = await simulator();
    const good = await relay(sim.url);
    expect(good.upstreamHealth.verified).toBe(true);
    const client = await ProtocolClient.connect(good.url);
    closers.push(() => client.close());
    await client.request({
      op: 'subscribe',
      channel: 'book',
      markets: ['00000000-0000-4000-8000-000000000000'],
    });
    await waitFor('unknown_market', () =>
      client.of('error').find((error) => error.code === 'unknown_market'),
    );
    expect((await fetch(`${good.url}/health`)).status).toBe(200);
  });
});
