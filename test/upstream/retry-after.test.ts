import { describe, expect, it } from 'vitest';
import { retryAfterMs } from '../../src/upstream/rate-gate.ts';

describe('retryAfterMs', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');

  it('reads delay-seconds', () => {
    expect(retryAfterMs('2', now, 30_000)).toBe(2000);
    expect(retryAfterMs(' 0 ', now, 30_000)).toBe(0);
  });

  it('reads an HTTP date, never negative', () => {
    expect(retryAfterMs('Wed, 01 Jan 2025 00:00:05 GMT', now, 30_000)).toBe(5000);
    expect(retryAfterMs('Tue, 31 Dec 2024 23:59:00 GMT', now, 30_000)).toBe(0);
  });

  it('caps long waits', () => {
    expect(retryAfterMs('3600', now, 30_000)).toBe(30_000);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:00 GMT', now, 30_000)).toBe(30_000);
  });

  it('is undefined when absent or unreadable, so the caller falls back to backoff', () => {
    expect(retryAfterMs(undefined, now, 30_000)).toBeUndefined();
    expect(retryAfterMs('soon', now, 30_000)).toBeUndefined();
    expect(retryAfterMs('-1', now, 30_000)).toBeUndefined();
  });
});
