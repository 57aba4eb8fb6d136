/**
 * An SSE reader that cannot keep up (docs/protocol.md "Slow consumers"): above the high-water mark
 * its stream messages are held back, on drain each held stream gets one snapshot (with an id that
 * carries it), and a reader that does not read is dropped. Driven through a response whose
 * buffered byte count the test sets, since loopback buffers megabytes before Node sees any.
 */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { defaultIsolationLimits, MarketAdmission } from '../../src/relay/admission/market.ts';
import { RelayEvents } from '../../src/relay/events.ts';
import { StreamRegistry } from '../../src/relay/streams/registry.ts';
import type { StreamOf } from '../../src/relay/streams/stream.ts';
import { SseConnection } from '../../src/sse/sse-connection.ts';
import { waitFor } from '../support/wait-for.ts';

const MARKET = '3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f';

class FakeResponse extends EventEmitter {
  readonly chunks: string[] = [];
  writableLength = 0;
  readonly socket = { writableLength: 0 };
  destroyed = false;
  closed = false;
  write(chunk: string | Buffer): boolean {
    this.chunks.push(chunk.toString());
    return true;
  }
  cork(): void {}
  uncork(): void {}
  end(): void {
    this.closed = true;
  }
  destroy(): void {
    this.destroyed = true;
  }
}

function setUp(slowConsumerTimeoutMs = 60_000) {
  const registry = new StreamRegistry({ lingerMs: 1_000, resumeBufferSize: 10 });
  const events = new RelayEvents();
  const response = new FakeResponse();
  const marketAdmission = new MarketAdmission({ registry, limits: defaultIsolationLimits });
  const limits = { highWaterBytes: 100, maxBufferBytes: 1_000, slowConsumerTimeoutMs, maxStreams: 10 };
  const connection = new SseConnection(
    1,
    response as unknown as ServerResponse,
    { registry, marketAdmission, events, limits },
    SseConnection.streamKeys('price', [MARKET], undefined),
  );
  connection.session.handle({ op: 'subscribe', channel: 'price', markets: [MARKET] });
  const stream = registry.get({ channel: 'price', market: MARKET }) as StreamOf<'price'>;
  let now = 0;
  const post = (bid: string) => stream.publish({ best_bid: bid }, 'ts', 'rts', ++now);
  return { registry, events, response, connection, stream, post };
}

describe('SSE slow reader', () => {
  it('holds stream messages back above the high-water mark and sends one snapshot on drain', () => {
    const { events, response, connection, stream, post } = setUp();
    const conflated: number[] = [];
    events.on('connection:conflated', ({ streams }) => conflated.push(streams));
    post('0.1');
    expect(response.chunks.join('')).toContain('"type":"snapshot"');
    response.socket.writableLength = 500;
    post('0.2');
    post('0.3');
    const written = response.chunks.length;
    post('0.4');
    expect(response.chunks.length).toBe(written);
    expect(connection.isHoldingBack).toBe(true);

    response.socket.writableLength = 0;
    response.emit('drain');
    expect(conflated).toEqual([1]);
    const [idLine, dataLine] = response.chunks.slice(-2);
    expect(idLine).toBe(`id: ${stream.epoch}.${(4).toString(36)}\n`);
    expect(JSON.parse(dataLine!.slice('data: '.length))).toMatchObject({
      type: 'snapshot',
      seq: 4,
      data: { best_bid: '0.4' },
    });
  });

  it('drops a reader that stays above the high-water mark past the time limit', async () => {
    const { events, response, post } = setUp(20);
    const dropped: number[] = [];
    events.on('connection:slow-consumer', ({ bufferedBytes }) => dropped.push(bufferedBytes));
    post('0.1');
    response.socket.writableLength = 500;
    post('0.2');
    await waitFor('the reader to be dropped', () => response.destroyed);
    expect(dropped).toEqual([500]);
  });

  it('drops a reader at once past the hard buffer limit, and writes nothing more', () => {
    const { response, connection, post } = setUp();
    post('0.1');
    response.socket.writableLength = 5_000;
    connection.heartbeat(new Date());
    expect(response.destroyed).toBe(true);
    const written = response.chunks.length;
    response.socket.writableLength = 0;
    post('0.2');
    connection.heartbeat(new Date());
    expect(response.chunks.length).toBe(written);
  });
});
