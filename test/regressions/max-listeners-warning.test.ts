/**
 * Regression: with more than ten upstream calls in flight, every one listening on the client's
 * shutdown signal made Node print `MaxListenersExceededWarning: ... 11 abort listeners` (seen in
 * the benchmark's relay at 5,000 clients). Many calls at once are the normal case, not a leak.
 */
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import { afterEach, expect, it } from 'vitest';
import { UpstreamClient } from '../../src/upstream/client.ts';
import { waitFor } from '../support/wait-for.ts';

const market = '11111111-1111-4111-8111-111111111111';
const book = JSON.stringify({
  market_id: market,
  bids: [],
  asks: [],
  last_price: '0.50000000',
  timestamp: '2026-01-01T00:00:00.000Z',
});
const warnings: string[] = [];
const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);

afterEach(() => {
  process.off('warning', onWarning);
});

it('keeps 30 calls in flight without a MaxListenersExceededWarning', async () => {
  process.on('warning', onWarning);
  const held: ServerResponse[] = [];
  const server = createServer((_request, response) => held.push(response));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const client = new UpstreamClient({ baseUrl: `http://127.0.0.1:${port}`, concurrency: 30, rps: 1000 });
  try {
    const calls = Array.from({ length: 30 }, () => client.orderBook(market));
    await waitFor('30 requests held', () => held.length === 30);
    for (const response of held) response.end(book);
    await Promise.all(calls);
    // Warnings are emitted on the next tick after the listener is added.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(warnings.filter((warning) => warning.includes('MaxListeners'))).toEqual([]);
  } finally {
    await client.close();
    server.close();
  }
});
