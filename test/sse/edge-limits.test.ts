/**
 * SSE responses count against the WebSocket's per-address and per-key caps, in the same counters
 * (docs/operations.md "Edge limits"): an address cannot get past a cap by mixing transports. Past
 * a cap an SSE request gets HTTP 429 where a WebSocket gets 4029; past the connection rate, 429 with
 * `Retry-After` for both.
 */
import { describe, expect, it } from 'vitest';
import type { EdgeLimits } from '../../src/relay/admission/edge.ts';
import type { RelayConfig } from '../../src/relay-server.ts';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { SseClient } from '../support/clients/sse-client.ts';
import { edgeLimitsHarness } from '../support/edge-limits.ts';
import { type Harness, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

describe('SSE under the edge limits', () => {
  let harness: Harness;
  let market: string;
  const { opened, start: startHarness } = useHarness();

  async function start(edge: Partial<EdgeLimits>, relay: Partial<RelayConfig> = {}): Promise<void> {
    harness = await startHarness(edgeLimitsHarness(edge, relay, { markets: 2 }));
    market = harness.sim.market.marketIds()[0]!;
  }
  async function sse(headers: Record<string, string> = {}): Promise<SseClient> {
    const client = await SseClient.connect(
      `${harness.relay.url}/v1/sse?channel=price&markets=${market}`,
      headers,
    );
    opened.push(client);
    expect(client.status).toBe(200);
    await waitFor('subscribed', () => client.of('subscribed').length === 1);
    return client;
  }
  async function ws(headers: Record<string, string> = {}): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(harness.relay.url, { headers });
    opened.push(client);
    return client;
  }
  async function refusedSse(headers: Record<string, string> = {}): Promise<Response> {
    const response = await fetch(`${harness.relay.url}/v1/sse?channel=price&markets=${market}`, { headers });
    expect(response.headers.get('content-type')).toBe('application/json');
    return response;
  }

  it('counts SSE and WebSocket connections of one address together', async () => {
    await start({ maxConnectionsPerAddress: 3 });
    await ws();
    const firstSse = await sse();
    await ws();
    // Three open, one way or the other: a fourth is refused on both transports.
    const refused = await refusedSse();
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({
      error: 'too_many_connections',
      message: 'too many connections from this address',
    });
    const fourthWs = await ws();
    await waitFor('the refusal', () => fourthWs.closeCode);
    expect(fourthWs.closeCode).toBe(4029);

    // Closing the SSE response frees its slot for either transport.
    await firstSse.close();
    await waitFor('the SSE slot freed', () => harness.relay.sse.connections.size === 0);
    const again = await ws();
    expect((await again.request({ op: 'ping' })).type).toBe('pong');
    expect((await refusedSse()).status).toBe(429);
  });

  it('counts SSE responses against the per-key cap, whatever their address', async () => {
    await start({ maxConnectionsPerKey: 2, trustedProxyDepth: 1 }, { apiKeys: ['k1', 'k2'] });
    await ws({ authorization: 'Bearer k1', 'x-forwarded-for': '203.0.113.1' });
    await sse({ authorization: 'Bearer k1', 'x-forwarded-for': '203.0.113.2' });
    const refused = await refusedSse({ authorization: 'Bearer k1', 'x-forwarded-for': '203.0.113.3' });
    expect(refused.status).toBe(429);
    expect((await refused.json()).message).toBe('too many connections for this API key');
    const third = await ws({ authorization: 'Bearer k1', 'x-forwarded-for': '203.0.113.3' });
    await waitFor('the refusal', () => third.closeCode);
    expect(third.closeCode).toBe(4029);
    await sse({ authorization: 'Bearer k2', 'x-forwarded-for': '203.0.113.3' });
  });

  it('counts SSE requests in the per-address connection rate', async () => {
    await start({ connectionsPerSecondPerAddress: 1, connectionBurstPerAddress: 2 });
    await ws();
    await sse();
    const refused = await refusedSse();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect((await refused.json()).error).toBe('too_many_requests');
  });
});
