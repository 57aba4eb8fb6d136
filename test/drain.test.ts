/**
 * A relay's drain (docs/operations.md "Shutdown", src/drain.ts), in process: `/readyz` is 503 from
 * the first moment, newcomers on either transport get 503, every WebSocket and SSE connection gets
 * a `going_away` with a delay of its own within `--drain-ms`, the closes (1001) are spread over the
 * window rather than all at once, and the relay is closed afterwards. `POST /drain` needs operator
 * access: the operator key, the operator port, or else a client on the relay's own machine.
 */
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { isLoopback } from '../src/http/drain-route.ts';
import { ProtocolClient } from './support/clients/protocol-client.ts';
import { SseClient } from './support/clients/sse-client.ts';
import { type Harness, useHarness } from './support/harness.ts';
import { waitFor } from './support/wait-for.ts';

const DRAIN_MS = 1_500;
const WS_CLIENTS = 20;
const OPERATOR_KEY = 'operator-key-for-the-drain-test';

describe('drain', () => {
  let harness: Harness;
  const { opened, start } = useHarness();

  async function subscribedClient(
    market: string,
  ): Promise<{ client: ProtocolClient; closedAt: () => number | undefined }> {
    const client = await ProtocolClient.connect(harness.relay.url);
    opened.push(client);
    let closedAt: number | undefined;
    client.ws.on('close', () => {
      closedAt = Date.now();
    });
    await client.request({ op: 'subscribe', channel: 'price', markets: [market] });
    return { client, closedAt: () => closedAt };
  }

  it('answers /readyz 503 at once, refuses newcomers, tells every connection to go and spreads the closes', async () => {
    harness = await start({ relay: { tuning: { drainMs: DRAIN_MS } } });
    const { relay } = harness;
    const [market] = harness.sim.market.marketIds();
    await waitFor('ready', async () => (await fetch(`${relay.url}/readyz`)).status === 200);
    const clients = await Promise.all(Array.from({ length: WS_CLIENTS }, () => subscribedClient(market!)));
    const sse = await SseClient.connect(`${relay.url}/v1/sse?channel=price&markets=${market}`);
    opened.push(sse);
    await waitFor(
      'every client connected',
      () => relay.ws.connections.size + relay.sse.connections.size === WS_CLIENTS + 1,
    );

    // As the program does for POST /drain: a listener that drains again gets the same drain.
    let again: Promise<void> | undefined;
    relay.events.once('relay:draining', () => {
      again = relay.drain();
    });
    const startedAt = Date.now();
    const drained = relay.drain();
    expect(again).toBe(drained);
    const ready = await fetch(`${relay.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'not_ready', reason: 'shutting_down' });
    const refusedWs = new WebSocket(`${relay.url.replace('http', 'ws')}/v1/ws`);
    refusedWs.on('error', () => {});
    const [, refusal] = (await once(refusedWs, 'unexpected-response')) as [unknown, IncomingMessage];
    expect(refusal.statusCode).toBe(503);
    refusal.resume();
    const refusedSse = await fetch(`${relay.url}/v1/sse?channel=price&markets=${market}`);
    expect(refusedSse.status).toBe(503);
    expect(await refusedSse.json()).toMatchObject({ error: 'shutting_down' });

    await drained;
    const doneAt = Date.now();
    const delays = clients.map(({ client }) => client.of('going_away')[0]?.reconnect_in_ms as number);
    for (const delay of delays) {
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(DRAIN_MS);
    }
    expect(new Set(delays).size).toBe(WS_CLIENTS);
    for (const { client } of clients) expect(client.of('going_away')).toHaveLength(1);
    expect(sse.of('going_away')).toHaveLength(1);
    await sse.closedByRelay();
    await waitFor('every client closed', () => clients.every(({ client }) => client.closeCode !== undefined));
    expect(new Set(clients.map(({ client }) => client.closeCode))).toEqual(new Set([1001]));
    // Spread, not at once: each half of the window closes some, and no close comes before its
    // client's own delay (a loaded machine may be late, never early).
    const closedAfter = clients.map(({ closedAt }) => closedAt()! - startedAt);
    const firstHalf = closedAfter.filter((ms) => ms < DRAIN_MS / 2).length;
    expect(firstHalf).toBeGreaterThanOrEqual(WS_CLIENTS / 4);
    expect(firstHalf).toBeLessThanOrEqual((WS_CLIENTS * 3) / 4);
    for (const [index, ms] of closedAfter.entries()) expect(ms).toBeGreaterThanOrEqual(delays[index]! - 5);
    // Within the window and the close grace.
    expect(doneAt - startedAt).toBeLessThan(DRAIN_MS + 3_000);
  });

  it('POST /drain without an operator key or port: a loopback client may drain it, and it closes when drained', async () => {
    harness = await start({ relay: { tuning: { drainMs: 100 } } });
    const answer = await fetch(`${harness.relay.url}/drain`, { method: 'POST' });
    expect(answer.status).toBe(202);
    expect(await answer.json()).toEqual({ status: 'draining', drain_ms: 100, connections: 0 });
    // Nobody to wait for: drained and closed at once.
    await harness.relay.drain();
    await expect(fetch(`${harness.relay.url}/readyz`)).rejects.toThrow();
  });

  it('POST /drain with an operator key needs the key; with an operator port it is there only', async () => {
    harness = await start({
      relay: { operatorPort: 0, operatorKey: OPERATOR_KEY, tuning: { drainMs: 100 } },
    });
    const { relay } = harness;
    expect((await fetch(`${relay.url}/drain`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${relay.operatorUrl}/drain`, { method: 'POST' })).status).toBe(401);
    expect((await fetch(`${relay.url}/readyz`)).status).toBe(200);
    const draining = once(relay.events, 'relay:draining');
    const answer = await fetch(`${relay.operatorUrl}/drain`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR_KEY}` },
    });
    expect(answer.status).toBe(202);
    expect(await draining).toEqual([{ drainMs: 100, connections: 0 }]);
    await relay.drain();
  });

  it('takes only loopback peers for an unguarded POST /drain', () => {
    expect(['127.0.0.1', '127.5.0.1', '::1', '::ffff:127.0.0.1'].map(isLoopback)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(['10.0.0.1', '::ffff:10.0.0.1', '2001:db8::1', '128.0.0.1', undefined].map(isLoopback)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
