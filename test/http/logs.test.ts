/**
 * The operational log (observability/logs.ts): one JSON line per notable event with the fields an
 * operator filters on, repeated upstream failures folded into one line per REPEAT_LOG_MS, and no line
 * per message sent.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPEAT_LOG_MS, subscribeLogs } from '../../src/observability/logs.ts';
import { RelayEvents } from '../../src/relay/events.ts';
import { UpstreamClient, type UpstreamRequestEvent } from '../../src/upstream/client.ts';

const MARKET = '0b9a5c36-9d0b-4f43-9d0e-2b8f0f7e1a11';

describe('operational log', () => {
  let lines: Record<string, unknown>[];
  let events: RelayEvents;
  let client: UpstreamClient;
  let now: number;
  let stop: () => void;

  beforeEach(() => {
    lines = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        done();
      },
    });
    events = new RelayEvents();
    // Never asked to send: only its request events are used.
    client = new UpstreamClient({ baseUrl: 'http://127.0.0.1:9' });
    now = 1_000_000;
    stop = subscribeLogs(pino({ level: 'info' }, sink), { events, client, now: () => now });
  });
  afterEach(async () => {
    stop();
    await client.close();
  });

  const request = (event: Partial<UpstreamRequestEvent>) =>
    client.events.emit('request', {
      endpoint: 'GET /clob/orderbook',
      outcome: 'ok',
      durationMs: 3,
      attempt: 1,
      ...event,
    });

  it('logs refusals at the edge once per burst and reason, and each lockout', () => {
    for (let i = 0; i < 30; i += 1) events.emit('edge:refused', { reason: 'auth', address: '203.0.113.9' });
    events.emit('edge:refused', { reason: 'auth', address: '203.0.113.9', lockedOut: true });
    events.emit('edge:refused', { reason: 'pending_shed', address: '203.0.113.10' });
    now += REPEAT_LOG_MS;
    events.emit('edge:refused', { reason: 'auth', address: '203.0.113.9' });
    expect(lines.map(({ event, reason, suppressed }) => ({ event, reason, suppressed }))).toEqual([
      { event: 'connections_refused', reason: 'auth', suppressed: undefined },
      { event: 'auth_lockout', reason: undefined, suppressed: undefined },
      { event: 'connections_refused', reason: 'pending_shed', suppressed: undefined },
      { event: 'connections_refused', reason: 'auth', suppressed: 30 },
    ]);
  });

  it('logs client connects and closes with their code, slow consumers and stream transitions', () => {
    events.emit('connection:open', { id: 7, remoteAddress: '127.0.0.1' });
    events.emit('connection:slow-consumer', { id: 7, bufferedBytes: 9_000_000 });
    events.emit('connection:close', {
      id: 7,
      code: 4008,
      by: 'relay',
      reason: 'slow consumer',
      durationMs: 1234,
    });
    events.emit('stream:state', {
      channel: 'book',
      market: MARKET,
      depth: 10,
      state: 'stale',
      reason: 'HTTP 500',
    });
    events.emit('stream:state', { channel: 'book', market: MARKET, depth: 10, state: 'live' });
    events.emit('stream:state', { channel: 'price', market: MARKET, state: 'closed', reason: 'gone' });
    expect(lines).toMatchObject([
      { level: 30, event: 'client_connected', connection: 7, remoteAddress: '127.0.0.1' },
      { level: 40, event: 'slow_consumer', connection: 7, bufferedBytes: 9_000_000 },
      {
        level: 30,
        event: 'client_closed',
        connection: 7,
        code: 4008,
        by: 'relay',
        reason: 'slow consumer',
        durationMs: 1234,
      },
      { level: 40, event: 'stream_stale', channel: 'book', market: MARKET, depth: 10, reason: 'HTTP 500' },
      { level: 30, event: 'stream_live', channel: 'book', market: MARKET },
      { level: 30, event: 'stream_closed', channel: 'price', market: MARKET, reason: 'gone' },
    ]);
  });

  it('logs a trades poll that outran its page bound', () => {
    events.emit('trades:truncated', { market: MARKET, pages: 5 });
    expect(lines).toMatchObject([{ level: 40, event: 'trades_truncated', market: MARKET, pages: 5 }]);
  });

  it('writes nothing per message sent or per successful request', () => {
    for (let i = 0; i < 100; i++) {
      events.emit('stream:sent', {
        channel: 'book',
        kind: 'update',
        subscribers: 3,
        bytes: 200,
        sinceReceiptMs: 1,
      });
      request({});
    }
    expect(lines).toEqual([]);
  });

  it('logs an upstream failure with endpoint and status, folds repeats, and logs the recovery', () => {
    request({ outcome: 'http_error', status: 500 });
    for (let i = 0; i < 5; i++) {
      now += 1_000;
      request({ outcome: 'http_error', status: 500 });
    }
    now += REPEAT_LOG_MS;
    request({ outcome: 'timeout' });
    request({});
    expect(lines).toMatchObject([
      {
        level: 40,
        event: 'upstream_failure',
        endpoint: 'GET /clob/orderbook',
        outcome: 'http_error',
        status: 500,
      },
      {
        level: 40,
        event: 'upstream_failure',
        endpoint: 'GET /clob/orderbook',
        outcome: 'timeout',
        suppressed: 5,
      },
      { level: 30, event: 'upstream_recovered', endpoint: 'GET /clob/orderbook', failures: 7 },
    ]);
    expect(lines[0]).not.toHaveProperty('suppressed');
  });

  it('treats a 404 as upstream answering, and logs effective poll interval changes only', () => {
    request({ outcome: 'http_error', status: 404 });
    const schedule = { bookMarkets: 1, priceMarkets: 0, bookIntervalMs: 1000, priceIntervalMs: 1000 };
    events.emit('poll:schedule', schedule);
    events.emit('poll:schedule', { ...schedule, bookMarkets: 2 });
    events.emit('poll:schedule', {
      ...schedule,
      bookMarkets: 200,
      bookIntervalMs: 2500,
      priceIntervalMs: 2500,
    });
    expect(lines).toMatchObject([{ event: 'poll_intervals', bookMarkets: 200, bookIntervalMs: 2500 }]);
    expect(lines).toHaveLength(1);
  });

  it('stops logging when unsubscribed', () => {
    stop();
    events.emit('connection:open', { id: 1, remoteAddress: undefined });
    request({ outcome: 'timeout' });
    expect(lines).toEqual([]);
  });
});
