/**
 * The SDK's SSE socket (client/connection/sse-socket.ts) and a `"*"` response, against a scripted
 * response: a market unsubscribed by name is dropped from the response (protocol.md "Server-Sent
 * Events" has no way to leave one market of a `"*"` response), without an error and without
 * reopening it, and stays dropped, even if announced again, until the relay says it left.
 */
import { describe, expect, it } from 'vitest';
import { type FetchLike, SseSocket } from '../../../packages/client/src/connection/sse-socket.ts';
import { waitFor } from '../../support/wait-for.ts';

const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';

/** A fetch whose responses the test writes events into. */
function scriptedFetch() {
  const opened: { url: string; write(message: object): void }[] = [];
  const fetchImpl: FetchLike = (url) => {
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (c) => (controller = c) });
    const encoder = new TextEncoder();
    opened.push({
      url,
      write: (message) => controller.enqueue(encoder.encode(`data: ${JSON.stringify(message)}\n\n`)),
    });
    return Promise.resolve({ status: 200, body });
  };
  return { opened, fetchImpl };
}

const price = (market: string, seq: number) => ({
  type: 'update',
  channel: 'price',
  market,
  epoch: 'e',
  seq,
  ts: '2026-01-01T00:00:00.000Z',
  rts: '2026-01-01T00:00:00.000Z',
  data: { best_bid: '0.50000000' },
});

describe('SseSocket with a "*" response', () => {
  it('drops the messages of a market unsubscribed by name until the relay says it left', async () => {
    const { opened, fetchImpl } = scriptedFetch();
    const socket = new SseSocket('http://relay.test/v1/sse', fetchImpl);
    const received: Record<string, unknown>[] = [];
    socket.onmessage = ({ data }) => received.push(JSON.parse(String(data)) as Record<string, unknown>);
    socket.send(JSON.stringify({ op: 'subscribe', channel: 'price', markets: ['*'] }));
    const all = await waitFor('the "*" response', () => opened[0]);
    all.write({ type: 'subscribed', channel: 'price', markets: [A, B], wildcard: true });
    await waitFor('the announcement', () => received.length === 1 || undefined);

    socket.send(JSON.stringify({ op: 'unsubscribe', channel: 'price', markets: [A], id: 7 }));
    expect(received.at(-1)).toEqual({ type: 'unsubscribed', channel: 'price', markets: [A], id: 7 });
    all.write(price(A, 2));
    all.write({ type: 'error', channel: 'price', market: A, code: 'upstream_unavailable', message: 'x' });
    all.write({ type: 'subscribed', channel: 'price', markets: [A, B], wildcard: true });
    all.write(price(B, 2));
    await waitFor("B's update", () => received.some((m) => m.market === B) || undefined);
    // Nothing of A came through; announced again, only B is; no response was opened for it.
    expect(received.slice(2)).toEqual([
      { type: 'subscribed', channel: 'price', markets: [B], wildcard: true },
      price(B, 2),
    ]);
    expect(opened).toHaveLength(1);

    // A leaves the active list, comes back, and is the response's again.
    all.write({ type: 'unsubscribed', channel: 'price', markets: [A], wildcard: true });
    all.write({ type: 'subscribed', channel: 'price', markets: [A], wildcard: true });
    all.write(price(A, 1));
    await waitFor("A's update", () => received.some((m) => m.market === A) || undefined);
    expect(received.slice(4).map((m) => [m.type, m.markets ?? m.market])).toEqual([
      ['unsubscribed', [A]],
      ['subscribed', [A]],
      ['update', A],
    ]);
    socket.close();
  });
});
