/**
 * `GET /metrics`: every metric moves when its cause happens. Each case scrapes before and after
 * provoking the cause on a real relay over the simulator (connect, subscribe, a market change, a bad
 * request, upstream failing and recovering, budget stretching, a slow client draining or being closed).
 */
import { describe, expect, it } from 'vitest';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { type Harness, useHarness } from '../support/harness.ts';
import { floodUntilHeldBack, slowConsumerHarness } from '../support/slow-consumer.ts';
import { waitFor } from '../support/wait-for.ts';

type Labels = Record<string, string>;

/** One scrape: the value of a series, summed over the series whose labels include `labels`. */
interface Scrape {
  text: string;
  value(name: string, labels?: Labels): number;
}

async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(`${url}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  const samples: { name: string; labels: Labels; value: number }[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) continue;
    const labels: Labels = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return {
    text,
    value: (name, wanted = {}) =>
      samples
        .filter(
          (sample) =>
            sample.name === name &&
            Object.entries(wanted).every(([key, value]) => sample.labels[key] === value),
        )
        .reduce((sum, sample) => sum + sample.value, 0),
  };
}

const M = 'market_relay_';

describe('GET /metrics', () => {
  let harness: Harness;
  const { opened: clients, start: startTestHarness } = useHarness();

  it('counts clients, subscriptions, polls, upstream requests and fan-out as they happen', async () => {
    // 100 rps cannot poll one market's book and price every 20 ms (90% of it is the polling budget).
    harness = await startTestHarness({ relay: { upstreamRps: 100, tuning: { lingerMs: 50 } } });
    const { url } = harness.relay;
    const [market] = harness.sim.market.marketIds() as [string];
    const before = await scrape(url);
    expect(before.value(`${M}info`)).toBe(1);
    expect(before.text).toMatch(/market_relay_info\{version="\d+\.\d+\.\d+[^"]*"\} 1/);
    expect(before.value(`${M}connections`)).toBe(0);
    expect(before.value(`${M}poll_interval_effective_seconds`, { kind: 'book' })).toBe(0.02);
    expect(before.value(`${M}poll_interval_configured_seconds`, { kind: 'book' })).toBe(0.02);
    // Process metrics come from this relay's own registry.
    expect(before.value(`${M}process_cpu_user_seconds_total`)).toBeGreaterThan(0);
    expect(before.text).toContain(`${M}nodejs_eventloop_lag_seconds`);
    expect(before.value(`${M}resume_buffer_bytes`)).toBe(0);

    const client = await ProtocolClient.connect(url);
    clients.push(client);
    expect((await scrape(url)).value(`${M}connections`)).toBe(1);

    await client.request({ op: 'subscribe', channel: 'book', markets: [market] });
    await client.request({ op: 'subscribe', channel: 'price', markets: [market] });
    await waitFor('both snapshots', () => client.view('book', market) && client.view('price', market));
    // The effective interval is measured between request starts: it exists after a few polls.
    const subscribed = await waitFor('the fan-out counted and the book interval measured', async () => {
      const now = await scrape(url);
      const fannedOut = now.value(`${M}poll_to_send_seconds_count`, { channel: 'price' }) > 0;
      const measured = now.value(`${M}poll_interval_effective_seconds`, { kind: 'book' }) !== 0.02;
      return fannedOut && measured ? now : undefined;
    });
    expect(subscribed.value(`${M}subscriptions`, { channel: 'book' })).toBe(1);
    expect(subscribed.value(`${M}subscriptions`, { channel: 'price' })).toBe(1);
    expect(subscribed.value(`${M}streams`, { channel: 'book', state: 'live' })).toBe(1);
    expect(subscribed.value(`${M}polled_markets`, { kind: 'book' })).toBe(1);
    expect(subscribed.value(`${M}polled_markets`, { kind: 'price' })).toBe(1);
    expect(subscribed.value(`${M}poll_interval_effective_seconds`, { kind: 'book' })).toBeGreaterThan(0.02);
    expect(subscribed.value(`${M}poll_interval_configured_seconds`, { kind: 'book' })).toBe(0.02);
    const book = { endpoint: 'GET /clob/orderbook', outcome: 'ok' };
    expect(subscribed.value(`${M}upstream_requests_total`, book)).toBeGreaterThan(0);
    expect(
      subscribed.value(`${M}upstream_request_duration_seconds_count`, { endpoint: 'GET /clob/orderbook' }),
    ).toBeGreaterThan(0);
    expect(subscribed.value(`${M}polls_total`, { kind: 'book', outcome: 'ok' })).toBeGreaterThan(0);
    expect(subscribed.value(`${M}stream_messages_sent_total`, { channel: 'book', type: 'snapshot' })).toBe(1);
    expect(subscribed.value(`${M}stream_sent_bytes_total`, { channel: 'book' })).toBeGreaterThan(0);
    expect(subscribed.value(`${M}poll_to_send_seconds_count`, { channel: 'book' })).toBe(1);

    // A market change: one update per stream, its bytes, its fan-out time.
    const seq = client.view('book', market)!.seq;
    harness.sim.tick();
    await waitFor('an update', () => client.view('book', market)!.seq > seq);
    const changed = await scrape(url);
    expect(
      changed.value(`${M}stream_messages_sent_total`, { channel: 'book', type: 'update' }),
    ).toBeGreaterThan(0);
    expect(changed.value(`${M}stream_sent_bytes_total`, { channel: 'book' })).toBeGreaterThan(
      subscribed.value(`${M}stream_sent_bytes_total`, { channel: 'book' }),
    );
    expect(changed.value(`${M}poll_to_send_seconds_count`, { channel: 'book' })).toBeGreaterThan(1);
    // The update is kept for resume, in the book stream's ring.
    expect(changed.value(`${M}resume_buffer_bytes`, { channel: 'book' })).toBeGreaterThan(0);
    expect(changed.value(`${M}upstream_requests_total`, book)).toBeGreaterThan(
      subscribed.value(`${M}upstream_requests_total`, book),
    );

    // A refused request.
    expect((await client.request({ op: 'subscribe', channel: 'tickers', markets: [market] })).type).toBe(
      'error',
    );
    expect((await scrape(url)).value(`${M}client_request_errors_total`, { code: 'unknown_channel' })).toBe(1);

    await client.close();
    const closed = await waitFor('the close to be counted', async () => {
      const now = await scrape(url);
      return now.value(`${M}connections`) === 0 ? now : undefined;
    });
    expect(closed.value(`${M}connections_closed_total`, { code: '1005', by: 'client' })).toBe(1);
    expect(closed.value(`${M}connections_closed_total`, { by: 'relay' })).toBe(0);
    // Nobody left: after the linger, nothing is polled.
    await waitFor('polling to stop', async () => (await scrape(url)).value(`${M}polled_markets`) === 0, {
      timeoutMs: 5_000,
      everyMs: 50,
    });
    await waitFor(
      'the streams to go, with their rings',
      async () => (await scrape(url)).value(`${M}resume_buffer_bytes`) === 0,
      { timeoutMs: 5_000, everyMs: 50 },
    );
  });

  it("counts no message of the catalogue a wildcard follows for itself, and a client's own", async () => {
    harness = await startTestHarness({ sim: { markets: 3 } });
    const { url } = harness.relay;
    const wildcard = await ProtocolClient.connect(url);
    clients.push(wildcard);
    await wildcard.request({ op: 'subscribe', channel: 'price', markets: ['*'] });
    const active = harness.sim.market.activeMarketIds();
    await waitFor('every price', () => (active.every((m) => wildcard.view('price', m)) ? true : undefined));
    const followed = await waitFor('the price snapshots counted', async () => {
      const now = await scrape(url);
      const counted = now.value(`${M}stream_messages_sent_total`, { channel: 'price', type: 'snapshot' });
      return counted === active.length ? now : undefined;
    });
    // The session reads the active catalogue itself: nothing of it went to a client.
    expect(followed.value(`${M}stream_messages_sent_total`, { channel: 'markets' })).toBe(0);
    expect(followed.value(`${M}stream_sent_bytes_total`, { channel: 'markets' })).toBe(0);
    expect(followed.value(`${M}subscriptions`, { channel: 'markets' })).toBe(0);
    expect(followed.value(`${M}subscriptions`, { channel: 'price' })).toBe(active.length);

    // A client's own subscription to it is counted, and each update it is sent.
    const reader = await ProtocolClient.connect(url);
    clients.push(reader);
    await reader.request({ op: 'subscribe', channel: 'markets', markets: ['active'] });
    const seq = (await waitFor('the catalogue', () => reader.view('markets', 'active'))).seq;
    harness.sim.tick();
    await waitFor('a catalogue update', () =>
      reader.view('markets', 'active')!.seq > seq ? true : undefined,
    );
    // Once per update the client got (the wildcard's session got each too).
    const updatesOf = () => reader.of('update').filter((message) => message.channel === 'markets').length;
    const read = await waitFor('each update counted once', async () => {
      const now = await scrape(url);
      const counted = now.value(`${M}stream_messages_sent_total`, { channel: 'markets', type: 'update' });
      return counted > 0 && counted === updatesOf() ? now : undefined;
    });
    expect(read.value(`${M}subscriptions`, { channel: 'markets' })).toBe(1);
  });

  it('reports upstream failures, stale streams and upstream down, then the recovery', async () => {
    harness = await startTestHarness({ relay: { tuning: { upstreamDownAfterMs: 300, upstreamRetries: 0 } } });
    const { url } = harness.relay;
    const [market] = harness.sim.market.marketIds() as [string];
    const client = await ProtocolClient.connect(url);
    clients.push(client);
    await client.request({ op: 'subscribe', channel: 'book', markets: [market] });
    await waitFor('a snapshot', () => client.view('book', market));
    const healthy = await scrape(url);
    expect(healthy.value(`${M}upstream_up`)).toBe(1);
    expect(healthy.value(`${M}upstream_error_ratio`)).toBe(0);

    harness.sim.setFaults({ errorRate: 1 });
    const down = await waitFor(
      'the stream to go stale and upstream down',
      async () => {
        const now = await scrape(url);
        return now.value(`${M}upstream_up`) === 0 && now.value(`${M}streams`, { state: 'stale' }) === 1
          ? now
          : undefined;
      },
      { everyMs: 20 },
    );
    expect(down.value(`${M}stream_state_changes_total`, { channel: 'book', state: 'stale' })).toBe(1);
    expect(down.value(`${M}streams`, { channel: 'book', state: 'live' })).toBe(0);
    expect(
      down.value(`${M}upstream_requests_total`, { endpoint: 'GET /clob/orderbook', outcome: 'http_error' }),
    ).toBeGreaterThan(0);
    expect(down.value(`${M}polls_total`, { kind: 'book', outcome: 'error' })).toBeGreaterThan(0);
    expect(down.value(`${M}upstream_error_ratio`)).toBeGreaterThan(0);

    harness.sim.setFaults({ errorRate: 0 });
    const recovered = await waitFor(
      'the stream to be live again',
      async () => {
        const now = await scrape(url);
        return now.value(`${M}upstream_up`) === 1 && now.value(`${M}streams`, { state: 'live' }) === 1
          ? now
          : undefined;
      },
      { everyMs: 20 },
    );
    expect(recovered.value(`${M}stream_state_changes_total`, { channel: 'book', state: 'live' })).toBe(1);
    expect(recovered.value(`${M}streams`, { state: 'stale' })).toBe(0);
  });

  describe('slow consumers', () => {
    /** Stops reading and re-subscribes until the relay holds the connection back. */
    async function stall(client: ProtocolClient, markets: string[]): Promise<void> {
      client.socket!.pause();
      await floodUntilHeldBack(harness.relay, (frame) => client.send(frame), markets, 1);
    }

    it('counts a conflation when a slow client drains', async () => {
      harness = await startTestHarness(slowConsumerHarness(10_000));
      const markets = harness.sim.market.marketIds();
      const slow = await ProtocolClient.connect(harness.relay.url);
      clients.push(slow);
      await slow.request({ op: 'subscribe', channel: 'book', markets });
      await waitFor('snapshots', () => markets.every((market) => slow.view('book', market)));
      const before = await scrape(harness.relay.url);
      await stall(slow, markets);
      slow.socket!.resume();
      const after = await waitFor('the conflation to be counted', async () => {
        const now = await scrape(harness.relay.url);
        return now.value(`${M}conflations_total`) > before.value(`${M}conflations_total`) ? now : undefined;
      });
      expect(after.value(`${M}conflated_streams_total`)).toBeGreaterThan(0);
      expect(after.value(`${M}slow_consumer_closes_total`)).toBe(0);
    });

    it('counts a slow-consumer close and its 4008', async () => {
      harness = await startTestHarness(slowConsumerHarness(200));
      const markets = harness.sim.market.marketIds();
      const slow = await ProtocolClient.connect(harness.relay.url);
      clients.push(slow);
      await stall(slow, markets);
      const after = await waitFor('the slow-consumer close to be counted', async () => {
        const now = await scrape(harness.relay.url);
        return now.value(`${M}slow_consumer_closes_total`) === 1 ? now : undefined;
      });
      expect(after.value(`${M}conflations_total`)).toBe(0);
      slow.socket!.resume();
      await waitFor('the client to read the close', () => slow.closeCode, { timeoutMs: 20_000 });
      // Counted once the relay lets the socket go (it no longer reads it: at most the close grace).
      await waitFor(
        'the 4008 to be counted',
        async () =>
          (await scrape(harness.relay.url)).value(`${M}connections_closed_total`, {
            code: '4008',
            by: 'relay',
          }) === 1,
        { timeoutMs: 10_000, everyMs: 100 },
      );
    });
  });
});
