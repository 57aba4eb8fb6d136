/**
 * `--otel-endpoint` (docs/operations.md "Traces"): a book update is one trace from its poll to the
 * socket writes of its fan-out, sent to an OTLP/HTTP receiver the test starts, and the upstream
 * request of a traced poll carries its W3C trace context (the simulator's request log keeps it). In
 * cluster mode the lease holder's write to Redis is a span of the trace too.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { tracesUrl } from '../../src/observability/tracing.ts';
import type { RelayConfig } from '../../src/relay-server.ts';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { redisAvailable, useRedis } from '../support/cluster/redis.ts';
import { type HarnessFixture, useHarness } from '../support/harness.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver.ts';
import { waitFor } from '../support/wait-for.ts';

const CLIENT_SPAN = 3;
/** The SDK dates a span's start by the wall clock's millisecond and its end by its duration from there. */
const CLOCK_STEP_NS = 1_000_000n;

let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

/**
 * A relay tracing at `ratio`, one client subscribed to one book, and one update of it received;
 * then the relay is closed, which sends the spans still waiting in the exporter's batch.
 */
async function updateOnce(fixture: HarnessFixture, ratio: number, relay: Partial<RelayConfig> = {}) {
  receiver = await startOtlpReceiver();
  const started = await fixture.start({
    sim: { markets: 1 },
    relay: { otelEndpoint: receiver.url, otelSampleRatio: ratio, ...relay },
  });
  const { sim } = started;
  const market = sim.market.marketIds()[0]!;
  const client = await ProtocolClient.connect(started.relay.url);
  fixture.opened.push(client);
  await client.request({ op: 'subscribe', channel: 'book', markets: [market] });
  await waitFor('the snapshot', () => client.view('book', market));
  const update = await waitFor(
    'a book update',
    () => {
      sim.tick();
      return client.of('update').find((message) => message.channel === 'book');
    },
    { everyMs: 50 },
  );
  await started.relay.close();
  expect(receiver.refused).toEqual([]);
  return { sim, market, update, spans: receiver.spans };
}

/**
 * The trace whose fan-out sent the update numbered `seq`, checked to be one tree from its poll to
 * that fan-out's end, and `one`, which finds its one span of a name inside the given parent.
 */
function traceOf(spans: readonly ReceivedSpan[], seq: unknown) {
  const fanOut = spans.find((span) => span.name === 'fan-out' && span.attributes['market_relay.seq'] === seq);
  expect(fanOut, `the fan-out of update ${String(seq)}`).toBeDefined();
  const trace = spans.filter((span) => span.traceId === fanOut!.traceId);
  const one = (name: string, parent: ReceivedSpan | undefined): ReceivedSpan => {
    const found = trace.filter((span) => span.name === name);
    expect(found, `one "${name}" span`).toHaveLength(1);
    expect(found[0]!.parentSpanId, `"${name}" inside "${parent?.name}"`).toBe(parent?.spanId ?? '');
    return found[0]!;
  };
  const poll = one('book poll', undefined);
  // The trace starts with the poll and ends with the fan-out's socket writes.
  expect(trace.filter((span) => span.startNs < poll.startNs)).toEqual([]);
  expect(trace.filter((span) => span.endNs > fanOut!.endNs + CLOCK_STEP_NS)).toEqual([]);
  return { trace, poll, fanOut: fanOut!, one };
}

describe('traces', () => {
  // `terse` compresses what is asked for compressed (the relay asks for br), so a body is decoded too.
  const fixture = useHarness('terse');

  it('shows one book update as one trace from the poll to the socket writes, with its subscribers', async () => {
    const { sim, market, update, spans } = await updateOnce(fixture, 1);
    const { poll, fanOut, one } = traceOf(spans, update.seq);
    expect(poll.attributes).toMatchObject({ 'market_relay.market': market, 'market_relay.outcome': 'ok' });
    const request = one('GET /clob/orderbook', poll);
    expect(request.kind).toBe(CLIENT_SPAN);
    expect(request.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.response.status_code': 200,
    });
    expect(one('decode', request).attributes['http.response.header.content-encoding']).toEqual(['br']);
    expect(one('parse', poll).attributes['market_relay.outcome']).toBe('ok');
    const publish = one('publish', one('numbering', poll));
    expect(publish.attributes).toMatchObject({
      'market_relay.message': 'update',
      'market_relay.seq': update.seq,
    });
    expect(fanOut.parentSpanId).toBe(publish.spanId);
    expect(fanOut.attributes['market_relay.subscribers']).toBe(1);
    expect(fanOut.attributes['market_relay.message_bytes']).toBeGreaterThan(0);
    expect(fanOut.attributes['market_relay.bytes']).toBe(fanOut.attributes['market_relay.message_bytes']);
    expect(fanOut.startNs + CLOCK_STEP_NS).toBeGreaterThanOrEqual(request.endNs);

    // Upstream saw the request span's context.
    const asked = sim.requests.filter((entry) => entry.traceparent?.includes(poll.traceId));
    expect(asked.map((entry) => [entry.path, entry.traceparent])).toEqual([
      ['/clob/orderbook', `00-${poll.traceId}-${request.spanId}-01`],
    ]);
  });

  it('traces no poll at ratio 0, and sends upstream no trace context', async () => {
    const { sim, spans } = await updateOnce(fixture, 0);
    expect(spans).toEqual([]);
    expect(sim.requests.filter((entry) => entry.traceparent !== undefined)).toEqual([]);
    expect(sim.requests.some((entry) => entry.path === '/clob/orderbook')).toBe(true);
  });

  it('does not wait past its shutdown for a receiver that never answers', async () => {
    const silent = createServer(() => {}).listen(0, '127.0.0.1');
    await once(silent, 'listening');
    try {
      const { port } = silent.address() as AddressInfo;
      const { sim, relay } = await fixture.start({
        sim: { markets: 1 },
        relay: { otelEndpoint: `http://127.0.0.1:${port}`, otelSampleRatio: 1 },
      });
      const client = await ProtocolClient.connect(relay.url);
      fixture.opened.push(client);
      const market = sim.market.marketIds()[0]!;
      await client.request({ op: 'subscribe', channel: 'book', markets: [market] });
      await waitFor('the snapshot', () => client.view('book', market));
      // Spans wait in the exporter's batch; sending them would wait for the exporter's own 10 s
      // timeout, past the 5 s a relay has to exit after SIGTERM.
      const closing = Date.now();
      await client.close();
      await relay.close();
      expect(Date.now() - closing).toBeLessThan(5_000);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it('sends to the traces path of a base URL, and to a full traces URL as it is', () => {
    expect(tracesUrl('http://collector:4318')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('http://collector:4318/')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('https://traces.example/otlp/v1/traces')).toBe('https://traces.example/otlp/v1/traces');
  });
});

describe.skipIf(!redisAvailable())('traces in cluster mode', () => {
  const redis = useRedis();
  const fixture = useHarness();

  it("puts the lease holder's Redis write in the trace, between the poll and the fan-out", async () => {
    const { update, spans } = await updateOnce(fixture, 1, { redis: redis.server.url });
    const { poll, fanOut, one } = traceOf(spans, update.seq);
    const numbering = one('numbering', poll);
    expect(numbering.attributes['market_relay.cluster']).toBe(true);
    const write = one('redis write', numbering);
    expect(write.attributes['market_relay.outcome']).toBe('written');
    expect(fanOut.parentSpanId).toBe(numbering.spanId);
    expect(fanOut.attributes['market_relay.subscribers']).toBe(1);
    expect(fanOut.startNs + CLOCK_STEP_NS).toBeGreaterThanOrEqual(write.endNs);
  });
});
