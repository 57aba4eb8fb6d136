/**
 * Per-address and per-key caps over real sockets (docs/operations.md "Edge limits"): connections per
 * address (4029 after the upgrade, so browsers see why), the connection rate per address (429 before
 * the upgrade), connections per API key, X-Forwarded-For only from a trusted proxy depth, and TCP
 * connections that never finish a request: capped and timed out.
 */
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { EdgeLimits } from '../../src/relay/admission/edge.ts';
import type { RelayConfig } from '../../src/relay-server.ts';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { edgeLimitsHarness } from '../support/edge-limits.ts';
import { type Harness, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

describe('edge limits', () => {
  let harness: Harness;
  const { opened: clients, start: startTestHarness } = useHarness();
  const sockets: Socket[] = [];

  async function start(edge: Partial<EdgeLimits>, relay: Partial<RelayConfig> = {}): Promise<Harness> {
    harness = await startTestHarness(edgeLimitsHarness(edge, relay));
    return harness;
  }
  async function client(headers: Record<string, string> = {}): Promise<ProtocolClient> {
    const opened = await ProtocolClient.connect(harness.relay.url, { headers });
    clients.push(opened);
    return opened;
  }
  async function refusedStatus(headers: Record<string, string> = {}): Promise<IncomingMessage> {
    const ws = new WebSocket(`${harness.relay.url.replace('http', 'ws')}/v1/ws`, { headers });
    const [, response] = (await once(ws, 'unexpected-response')) as [unknown, IncomingMessage];
    return response;
  }

  it('caps connections per address with 4029, telling the client why', async () => {
    await start({ maxConnectionsPerAddress: 3 });
    for (let i = 0; i < 3; i += 1) await client();
    const fourth = await client();
    await waitFor('the refusal', () => fourth.closeCode);
    expect(fourth.closeCode).toBe(4029);
    expect(harness.relay.ws.connections.size).toBe(3);
    await clients[0]!.close();
    await waitFor('a free slot', () => harness.relay.ws.connections.size === 2);
    const again = await client();
    expect((await again.request({ op: 'ping' })).type).toBe('pong');
  });

  it('limits new connections per address per second with 429 before the upgrade', async () => {
    await start({ connectionsPerSecondPerAddress: 1, connectionBurstPerAddress: 2 });
    await client();
    await client();
    const response = await refusedStatus();
    expect(response.statusCode).toBe(429);
    expect(response.headers['retry-after']).toBe('1');
    await waitFor(
      'the rate to allow one more',
      async () => {
        try {
          await client();
          return true;
        } catch {
          return false;
        }
      },
      { everyMs: 250, timeoutMs: 5_000 },
    );
  });

  it('trusts X-Forwarded-For only as deep as configured', async () => {
    await start({ maxConnectionsPerAddress: 1, trustedProxyDepth: 1 });
    // Behind one proxy: the proxy's entry (the last) is the client; what the client wrote is not.
    await client({ 'x-forwarded-for': 'spoofed-1, 203.0.113.1' });
    const sameClient = await client({ 'x-forwarded-for': 'spoofed-2, 203.0.113.1' });
    await waitFor('the refusal', () => sameClient.closeCode);
    expect(sameClient.closeCode).toBe(4029);
    const other = await client({ 'x-forwarded-for': '203.0.113.2' });
    expect((await other.request({ op: 'ping' })).type).toBe('pong');
  });

  it('ignores X-Forwarded-For without trusted proxies', async () => {
    await start({ maxConnectionsPerAddress: 1 });
    await client({ 'x-forwarded-for': '203.0.113.1' });
    const second = await client({ 'x-forwarded-for': '203.0.113.2' });
    await waitFor('the refusal', () => second.closeCode);
    expect(second.closeCode).toBe(4029);
  });

  it('caps connections per API key across addresses', async () => {
    await start({ maxConnectionsPerKey: 2, trustedProxyDepth: 1 }, { apiKeys: ['k1', 'k2'] });
    await client({ authorization: 'Bearer k1', 'x-forwarded-for': '203.0.113.1' });
    await client({ authorization: 'Bearer k1', 'x-forwarded-for': '203.0.113.2' });
    const third = await client({ authorization: 'Bearer k1', 'x-forwarded-for': '203.0.113.3' });
    await waitFor('the refusal', () => third.closeCode);
    expect(third.closeCode).toBe(4029);
    const otherKey = await client({ authorization: 'Bearer k2', 'x-forwarded-for': '203.0.113.3' });
    expect((await otherKey.request({ op: 'ping' })).type).toBe('pong');
  });

  it('caps and times out connections that never finish their first request, answering each in HTTP', async () => {
    await start({ maxPendingConnections: 50, maxPendingPerAddress: 5, headersTimeoutMs: 500 });
    const { port } = new URL(harness.relay.url);
    const answers: string[] = [];
    const closed: boolean[] = [];
    for (let i = 0; i < 20; i += 1) {
      const socket = connect(Number(port), '127.0.0.1');
      socket.on('error', () => {});
      socket.on('data', (data) => answers.push(data.toString('latin1').split('\r\n')[0]!));
      socket.on('close', () => closed.push(true));
      sockets.push(socket);
      // Half an upgrade request, never finished.
      socket.write('GET /v1/ws HTTP/1.1\r\nHost: relay\r\nUpgrade: websocket\r\n');
    }
    // Past the per-address cap they are answered 429; the rest 408 when the header timeout ends.
    await waitFor('every stalled socket answered and closed', () => closed.length === 20, {
      timeoutMs: 8_000,
    });
    expect(answers.filter((line) => line === 'HTTP/1.1 429 Too Many Requests')).toHaveLength(15);
    expect(answers.filter((line) => line === 'HTTP/1.1 408 Request Timeout')).toHaveLength(5);
    const after = await client();
    expect((await after.request({ op: 'ping' })).type).toBe('pong');
    for (const socket of sockets.splice(0)) socket.destroy();
  });
});
