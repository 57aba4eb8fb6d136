/**
 * `--otel-endpoint` (docs/operations.md "Traces"): a book update is one trace from its poll to the
 * socket writes of its fan-out, sent to an OTLP/HTTP receiver the test starts, and the upstream
 * request of a traced poll carries its W3C trace context (the simulator's request log keeps it).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { useHarness } from '../support/harness.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver.ts';
import { waitFor } from '../support/wait-for.ts';

const CLIENT_SPAN = 3;

describe('traces', () => {
  // `terse` compresses what is asked for compressed (the relay asks for br), so a body is decoded too.
  const fixture = useHarness('terse');
  let receiver: OtlpReceiver | undefined;
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  /** A relay tracing at `ratio`, one client subscribed to one book, and one update of it received. */
  async function updateOnce(ratio: number) {
    receiver = await startOtlpReceiver();
    const { sim, relay } = await fixture.start({
      sim: { markets: 1 },
      relay: { otelEndpoint: receiver.url, otelSampleRatio: ratio },
    });
    const market = sim.market.marketIds()[0]!;
    const client = await ProtocolClient.connect(relay.url);
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
    // Closing the relay sends the spans still waiting in the exporter's batch.
    await relay.close();
    return { sim, market, update, spans: receiver.spans };
  }

  it('shows one book update as one trace from the poll to the socket writes, with its subscribers', async () => {
    const { sim, market, update, spans } = await updateOnce(1);
    expect(receiver?.refused).toEqual([]);
    const publish = spans.find(
      (span) =>
        span.name === 'publish' &&
        span.attributes['market_relay.message'] === 'update' &&
        span.attributes['market_relay.seq'] === update.seq,
    );
    expect(publish, 'the publish span of the update').toBeDefined();
    const trace = spans.filter((span) => span.traceId === publish!.traceId);
    const one = (name: string, parent: ReceivedSpan | undefined): ReceivedSpan => {
      const found = trace.filter((span) => span.name === name);
      expect(found, `one "${name}" span`).toHaveLength(1);
      expect(found[0]!.parentSpanId, `"${name}" inside "${parent?.name}"`).toBe(parent?.spanId ?? '');
      return found[0]!;
    };

    const poll = one('book poll', undefined);
    expect(poll.attributes).toMatchObject({ 'market_relay.market': market, 'market_relay.outcome': 'ok' });
    const request = one('GET /clob/orderbook', poll);
    expect(request.kind).toBe(CLIENT_SPAN);
    expect(request.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.response.status_code': 200,
    });
    expect(one('decode', request).attributes['http.response.header.content-encoding']).toEqual(['br']);
    expect(one('parse', poll).attributes['market_relay.outcome']).toBe('ok');
    const numbering = one('numbering', poll);
    expect(one('publish', numbering)).toBe(publish);
    const fanOut = one('fan-out', publish!);
    expect(fanOut.attributes['market_relay.subscribers']).toBe(1);
    expect(fanOut.attributes['market_relay.message_bytes']).toBeGreaterThan(0);
    expect(fanOut.attributes['market_relay.bytes']).toBe(fanOut.attributes['market_relay.message_bytes']);

    // The trace starts with the poll and ends with the fan-out's socket writes. The SDK dates a
    // span's start by the wall clock's millisecond and its end by its duration from there.
    const clockStep = 1_000_000n;
    expect(trace.filter((span) => span.startNs < poll.startNs)).toEqual([]);
    expect(trace.filter((span) => span.endNs > fanOut.endNs + clockStep)).toEqual([]);
    expect(fanOut.startNs + clockStep).toBeGreaterThanOrEqual(request.endNs);

    // Upstream saw the request span's context.
    const asked = sim.requests.filter((entry) => entry.traceparent?.includes(publish!.traceId));
    expect(asked.map((entry) => [entry.path, entry.traceparent])).toEqual([
      ['/clob/orderbook', `00-${publish!.traceId}-${request.spanId}-01`],
    ]);
  });

  it('traces no poll at ratio 0, and sends upstream no trace context', async () => {
    const { sim, spans } = await updateOnce(0);
    expect(spans).toEqual([]);
    expect(sim.requests.filter((entry) => entry.traceparent !== undefined)).toEqual([]);
    expect(sim.requests.some((entry) => entry.path === '/clob/orderbook')).toBe(true);
  });
});
