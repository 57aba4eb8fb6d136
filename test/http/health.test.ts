/**
 * `GET /health` (docs/operations.md): 200 with the relay's and upstream's state while serving; 503 once
 * upstream has been unreachable for longer than `upstreamDownAfterMs`, whether it is gone or failing
 * every request; 200 again when it answers.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { startRelay } from '../../src/relay-server.ts';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { type Harness, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

interface HealthBody {
  status: string;
  version: string;
  upstream: {
    url: string;
    reachable: boolean;
    lastSuccessAt: string | null;
    lastError: string | null;
    errorRate: number;
  };
  connections: number;
  streams: number;
  staleStreams: number;
}

async function health(url: string): Promise<{ status: number; body: HealthBody }> {
  const response = await fetch(`${url}/health`);
  return { status: response.status, body: (await response.json()) as HealthBody };
}

describe('GET /health', () => {
  let harness: Harness;
  const { opened: clients, start: startTestHarness } = useHarness();

  it('answers 200 with own and upstream state while serving', async () => {
    harness = await startTestHarness();
    const client = await ProtocolClient.connect(harness.relay.url);
    clients.push(client);
    const [market] = harness.sim.market.marketIds() as [string];
    await client.request({ op: 'subscribe', channel: 'book', markets: [market] });
    const { status, body } = await health(harness.relay.url);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: 'ok',
      upstream: { url: harness.sim.url, reachable: true, lastError: null, errorRate: 0 },
      connections: 1,
      streams: 1,
      staleStreams: 0,
    });
    expect(Date.parse(body.upstream.lastSuccessAt!)).not.toBeNaN();
  });

  it('answers 503 when the upstream is stopped', async () => {
    harness = await startTestHarness({ relay: { tuning: { upstreamDownAfterMs: 200 } } });
    // 200 while upstream answers (a busy machine can leave 200 ms without an answer, so wait for it).
    await waitFor('200', async () => (await health(harness.relay.url)).status === 200);
    await harness.sim.close();
    const down = await waitFor('503', async () => {
      const answer = await health(harness.relay.url);
      return answer.status === 503 ? answer : undefined;
    });
    expect(down.body.status).toBe('upstream_unreachable');
    expect(down.body.upstream.reachable).toBe(false);
  });

  it('answers 503 while upstream fails every request, and 200 once it recovers', async () => {
    harness = await startTestHarness({ relay: { tuning: { upstreamDownAfterMs: 200, upstreamRetries: 0 } } });
    const client = await ProtocolClient.connect(harness.relay.url);
    clients.push(client);
    const [market] = harness.sim.market.marketIds() as [string];
    await client.request({ op: 'subscribe', channel: 'book', markets: [market] });
    await waitFor('a snapshot', () => client.view('book', market));

    harness.sim.setFaults({ errorRate: 1 });
    const down = await waitFor('503 with the stream stale', async () => {
      const answer = await health(harness.relay.url);
      return answer.status === 503 && answer.body.staleStreams === 1 ? answer : undefined;
    });
    expect(down.body.status).toBe('upstream_unreachable');
    expect(down.body.upstream.errorRate).toBeGreaterThan(0);
    expect(down.body.upstream.lastError).toMatch(/GET \/clob\/orderbook: http_error 500/);
    expect(down.body.staleStreams).toBe(1);

    harness.sim.setFaults({ errorRate: 0 });
    const up = await waitFor('200 again', async () => {
      const answer = await health(harness.relay.url);
      return answer.status === 200 ? answer : undefined;
    });
    expect(up.body.upstream.reachable).toBe(true);
  });

  it('leaves hosts, paths and error texts out when the operator view is on another port', async () => {
    harness = await startTestHarness({
      relay: { operatorPort: 0, operatorHost: '127.0.0.1', tuning: { upstreamRetries: 0 } },
    });
    harness.sim.setFaults({ errorRate: 1 });
    const client = await ProtocolClient.connect(harness.relay.url);
    clients.push(client);
    await client.request({ op: 'subscribe', channel: 'book', markets: harness.sim.market.marketIds() });
    await waitFor('an upstream failure', () => harness.relay.upstreamHealth.snapshot().lastError);
    const response = await fetch(`${harness.relay.url}/health`);
    const text = await response.text();
    const { host } = new URL(harness.sim.url);
    for (const secret of [host, 'http', '/clob', 'GET ']) expect(text).not.toContain(secret);
    expect(JSON.parse(text).upstream).not.toHaveProperty('url');
    // The operator's own view still has them.
    const snapshot = await (await fetch(`${harness.relay.operatorUrl}/status/snapshot`)).json();
    expect(snapshot.health.upstream.url).toBe(harness.sim.url);
  });

  it('does not call upstream reachable before it has answered', async () => {
    const relay = await startRelay(
      {
        port: 0,
        host: '127.0.0.1',
        upstream: 'http://127.0.0.1:9',
        bookPollMs: 1_000,
        pricePollMs: 1_000,
        upstreamConcurrency: 4,
        upstreamRps: 50,
        logLevel: 'silent',
        simMarkets: 1,
        simSeed: 1,
        tuning: { upstreamRetries: 0 },
      },
      pino({ level: 'silent' }),
    );
    clients.push(relay);
    const { body } = await health(relay.url);
    expect(body.upstream.reachable).toBe(false);
    expect(body.upstream.lastSuccessAt).toBeNull();
  });
});
