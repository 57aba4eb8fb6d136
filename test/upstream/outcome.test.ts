import { describe, expect, it } from 'vitest';
import {
  UpstreamHttpError,
  UpstreamNetworkError,
  UpstreamSchemaError,
  UpstreamTimeoutError,
} from '../../src/upstream/errors.ts';
import type { Exchange } from '../../src/upstream/exchange.ts';
import { judgeExchange, type UpstreamRequest } from '../../src/upstream/outcome.ts';
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

function answered(status: number, body: unknown, retryAfter?: string): Exchange {
  return {
    kind: 'answered',
    status,
    retryAfter,
    text: typeof body === 'string' ? body : JSON.stringify(body),
  };
}

const judge = (exchange: Exchange) => judgeExchange(request, exchange, 30_000, now);

describe('judgeExchange', () => {
  it('validates a 2xx body against the schema', () => {
    expect(judge(answered(200, healthy))).toEqual({ ok: true, outcome: 'ok', status: 200, value: healthy });
    const broken = judge(answered(200, { ...healthy, services: {} }));
    expect(broken).toMatchObject({ ok: false, outcome: 'schema_error', status: 200, retryable: false });
    expect(judge(answered(200, '{'))).toMatchObject({
      outcome: 'schema_error',
      error: expect.any(UpstreamSchemaError),
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

  it('maps a 404 to the endpoint’s code and keeps the upstream error text', () => {
    const result = judge(answered(404, { success: false, error: 'no such thing' }));
    expect(result).toMatchObject({ ok: false, status: 404 });
    expect(result.ok ? undefined : result.error).toMatchObject({ code: 'upstream_unavailable' });
    expect(result.ok ? '' : result.error.message).toBe('GET /health: HTTP 404: no such thing');
  });

  it('waits out a 429 for its Retry-After, capped', () => {
    expect(judge(answered(429, '', '2'))).toMatchObject({ outcome: 'rate_limited', retryAfterMs: 2000 });
    expect(judge(answered(429, '', '3600'))).toMatchObject({ retryAfterMs: 30_000 });
    expect(judge(answered(429, ''))).toMatchObject({ retryable: true, retryAfterMs: undefined });
  });
});
