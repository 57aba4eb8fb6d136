import { describe, expect, it } from 'vitest';
import {
  UpstreamDecodeError,
  UpstreamHttpError,
  UpstreamInvalidJsonError,
  UpstreamNetworkError,
  UpstreamSchemaError,
  UpstreamTimeoutError,
} from '../../src/upstream/errors.ts';
import type { Exchange } from '../../src/upstream/exchange.ts';
import { judgeExchange, ResponseMemo, type UpstreamRequest } from '../../src/upstream/outcome.ts';
import { upstreamHealth } from '../../src/upstream/schemas.ts';

const request: UpstreamRequest<unknown> = {
  endpoint: 'GET /health',
  method: 'GET',
  path: '/health',
  schema: upstreamHealth,
  notFoundCode: 'upstream_unavailable',
};
const healthy = {
  status: 'ok',
  timestamp: '2025-01-01T00:00:00Z',
  services: { database: true, message_queue: true, settlement: true },
};
const now = Date.parse('2025-01-01T00:00:00Z');

function answered(status: number, body: unknown, retryAfter?: string, viaRelay?: boolean): Exchange {
  const bytes = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return { kind: 'answered', status, retryAfter, body: bytes, wireBytes: bytes.length, viaRelay };
}

const judge = (exchange: Exchange) => judgeExchange(request, exchange, 30_000, now);

describe('judgeExchange', () => {
  it('validates a 2xx body against the schema', () => {
    expect(judge(answered(200, healthy))).toEqual({ ok: true, outcome: 'ok', status: 200, value: healthy });
    const broken = judge(answered(200, { ...healthy, services: {} }));
    expect(broken).toMatchObject({ ok: false, outcome: 'schema_error', status: 200, retryable: false });
    expect(judge(answered(200, '{'))).toMatchObject({
      outcome: 'invalid_json',
      retryable: false,
      error: expect.any(UpstreamInvalidJsonError),
    });
    const undecodable = { ...answered(200, healthy), undecodable: 'gzip body cannot be decoded' };
    expect(judge(undecodable)).toMatchObject({
      outcome: 'decode_error',
      retryable: false,
      error: expect.any(UpstreamDecodeError),
    });
  });

  it('retries 5xx, timeouts and network errors, not other 4xx', () => {
    expect(judge(answered(503, { success: false, error: 'busy' }))).toMatchObject({
      outcome: 'http_error',
      retryable: true,
      error: expect.any(UpstreamHttpError),
    });
    expect(judge(answered(400, ''))).toMatchObject({ outcome: 'http_error', retryable: false });
    const timeout = new UpstreamTimeoutError('GET /health', 'slow');
    expect(judge({ kind: 'failed', error: timeout })).toMatchObject({ outcome: 'timeout', retryable: true });
    const reset = new UpstreamNetworkError('GET /health', 'reset');
    expect(judge({ kind: 'failed', error: reset })).toMatchObject({
      outcome: 'network_error',
      retryable: true,
    });
  });

  it('maps a 404 to the endpoint’s code and keeps the start of the body for the log', () => {
    const result = judge(answered(404, { error: 'no such thing' }));
    expect(result).toMatchObject({ ok: false, status: 404 });
    expect(result.ok ? undefined : result.error).toMatchObject({ code: 'upstream_unavailable' });
    expect(result.ok ? '' : result.error.message).toBe('GET /health: HTTP 404: {"error":"no such thing"}');
    const empty = judge(answered(404, ''));
    expect(empty.ok ? '' : empty.error.message).toBe('GET /health: HTTP 404: empty body');
  });

  it('reads a 404 on a market endpoint the same whatever its body (its shape is not shown)', () => {
    const book: UpstreamRequest<unknown> = {
      ...request,
      endpoint: 'GET /clob/orderbook',
      notFoundCode: undefined,
    };
    // Whether the market is gone is the relay's judgement (relay/poll/not-found.ts), never the body's.
    for (const body of [
      { success: false, error: 'market m not found' },
      { error: 'market not found' },
      { message: 'Route GET:/clob/orderbook not found', statusCode: 404 },
      'Not Found',
      '',
    ]) {
      const other = judgeExchange(book, answered(404, body), 30_000, now);
      expect(other).toMatchObject({ ok: false, outcome: 'http_error', status: 404, retryable: false });
      expect(other.ok ? undefined : other.error).toMatchObject({ code: 'unknown_market' });
    }
  });

  it('refuses an answer that came through another market-relay (Via), whatever its body', () => {
    const result = judge(answered(200, healthy, undefined, true));
    expect(result).toMatchObject({ ok: false, outcome: 'http_error', retryable: false });
    expect(!result.ok && result.error.code).toBe('upstream_unavailable');
    const notFound = judge(answered(404, { success: false, error: 'market not found' }, undefined, true));
    expect(!notFound.ok && notFound.error.code).toBe('upstream_unavailable');
  });

  it('waits out a 429 for its Retry-After, capped', () => {
    expect(judge(answered(429, '', '2'))).toMatchObject({ outcome: 'rate_limited', retryAfterMs: 2000 });
    expect(judge(answered(429, '', '3600'))).toMatchObject({ retryAfterMs: 30_000 });
    expect(judge(answered(429, ''))).toMatchObject({ retryable: true, retryAfterMs: undefined });
  });
});

describe('judgeExchange with a ResponseMemo', () => {
  const memo = () => new ResponseMemo<unknown>();

  it('resolves a body identical to the last valid one to the very same value, unparsed', () => {
    const remembered = memo();
    const first = judgeExchange(request, answered(200, healthy), 30_000, now, { memo: remembered });
    const again = judgeExchange(request, answered(200, healthy), 30_000, now, { memo: remembered });
    expect(first.ok && again.ok).toBe(true);
    expect(again.ok && first.ok && again.value === first.value).toBe(true);
  });

  it('validates a body that differs, and remembers it instead', () => {
    const remembered = memo();
    const first = judgeExchange(request, answered(200, healthy), 30_000, now, { memo: remembered });
    const moved = { ...healthy, timestamp: '2025-01-01T00:00:01Z' };
    const second = judgeExchange(request, answered(200, moved), 30_000, now, { memo: remembered });
    expect(second).toMatchObject({ ok: true, value: moved });
    expect(second.ok && first.ok && second.value !== first.value).toBe(true);
    const third = judgeExchange(request, answered(200, moved), 30_000, now, { memo: remembered });
    expect(third.ok && second.ok && third.value === second.value).toBe(true);
  });

  it('fails a broken body after a remembered one, every time it comes, and keeps the good one', () => {
    const remembered = memo();
    const good = judgeExchange(request, answered(200, healthy), 30_000, now, { memo: remembered });
    const broken = { ...healthy, services: { database: 'yes' } };
    for (let i = 0; i < 2; i++) {
      const result = judgeExchange(request, answered(200, broken), 30_000, now, { memo: remembered });
      expect(result).toMatchObject({
        ok: false,
        outcome: 'schema_error',
        error: expect.any(UpstreamSchemaError),
      });
      expect(!result.ok && result.error.message).toContain('services.database');
    }
    const back = judgeExchange(request, answered(200, healthy), 30_000, now, { memo: remembered });
    expect(back.ok && good.ok && back.value === good.value).toBe(true);
  });

  it('answers the same body with the stand-in kept for its value, and parses the body again on demand', () => {
    const remembered = memo();
    const first = judgeExchange(request, answered(200, healthy), 30_000, now, { memo: remembered });
    const standIn = { kept: 'less' };
    remembered.keep(first.ok ? first.value : undefined, standIn);
    const again = judgeExchange(request, answered(200, healthy), 30_000, now, { memo: remembered });
    expect(again.ok && again.value).toBe(standIn);
    expect(remembered.reparse()).toEqual(healthy);
    // A stand-in for a value no longer remembered changes nothing.
    remembered.keep(first.ok ? first.value : undefined, { other: true });
    const third = judgeExchange(request, answered(200, healthy), 30_000, now, { memo: remembered });
    expect(third.ok && third.value).toBe(standIn);
  });

  it('never answers an error status from the memo', () => {
    const remembered = memo();
    judgeExchange(request, answered(200, healthy), 30_000, now, { memo: remembered });
    expect(judgeExchange(request, answered(503, healthy), 30_000, now, { memo: remembered })).toMatchObject({
      ok: false,
      outcome: 'http_error',
    });
  });
});

describe('judgeExchange with a reader of its own', () => {
  it('answers with what the reader makes of a body, remembers it, and reads the general way when it declines', () => {
    const remembered = new ResponseMemo<unknown>();
    const read = { read: 'straight from the bytes' };
    const reads: string[] = [];
    const reader = (body: Buffer) => {
      reads.push(body.toString('utf8'));
      return body.includes('"ok"') ? read : undefined;
    };
    const readOne = judgeExchange(request, answered(200, healthy), 30_000, now, {
      memo: remembered,
      read: reader,
    });
    expect(readOne.ok && readOne.value).toBe(read);
    // The same bytes again come from the memo without asking the reader.
    const again = judgeExchange(request, answered(200, healthy), 30_000, now, {
      memo: remembered,
      read: reader,
    });
    expect(again.ok && again.value).toBe(read);
    expect(reads).toHaveLength(1);
    expect(remembered.reparse()).toEqual(healthy);
    // Declined: parsed and validated as any body, so a broken one still fails with the schema's words.
    const broken = { ...healthy, status: 'degraded', services: { database: 'yes' } };
    const declined = judgeExchange(request, answered(200, broken), 30_000, now, {
      memo: remembered,
      read: reader,
    });
    expect(declined).toMatchObject({ ok: false, outcome: 'schema_error' });
    expect(reads).toHaveLength(2);
  });
});
