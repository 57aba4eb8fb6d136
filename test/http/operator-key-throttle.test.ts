/**
 * Guessing the operator key (docs/operations.md "Operator endpoints"): missing and wrong keys are
 * counted per client address like API keys, answered later and later and then 429 with
 * `Retry-After` for a lockout, whatever key comes meanwhile; other addresses, and the right key from
 * them, are not affected, and the API keys' own throttle is a separate one.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { edgeLimitsHarness } from '../support/edge-limits.ts';
import { useHarness } from '../support/harness.ts';

const OPERATOR_KEY = 'operator-key-0123456789';

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: string;
  elapsedMs: number;
}

/** A GET from `localAddress` (a loopback address of its own: another client address). */
function get(url: string, headers: Record<string, string>, localAddress = '127.0.0.1'): Promise<Answer> {
  const startedAt = performance.now();
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { headers, localAddress, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          retryAfter: response.headers['retry-after'],
          body,
          elapsedMs: performance.now() - startedAt,
        }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe('operator key throttle', () => {
  const { start } = useHarness();

  it('slows and then locks out one address behind a trusted proxy, never the right key from another', async () => {
    const harness = await start(
      edgeLimitsHarness(
        { trustedProxyDepth: 1, authFreeFailures: 2, authLockoutFailures: 4, authLockoutMs: 60_000 },
        { operatorKey: OPERATOR_KEY, apiKeys: ['the-api-key'] },
      ),
    );
    const metrics = `${harness.relay.url}/metrics`;
    // The proxy appended the guesser's address; what the guesser wrote to the left is not trusted.
    let written = 0;
    const guesser = (key?: string) => {
      written += 1;
      return {
        'x-forwarded-for': `198.51.100.${written}, 203.0.113.9`,
        ...(key === undefined ? {} : bearer(key)),
      };
    };

    const answers: Answer[] = [];
    answers.push(await get(metrics, guesser()));
    for (const guess of ['guess-1', 'guess-2', 'guess-3', 'guess-4'])
      answers.push(await get(metrics, guesser(guess)));
    const statuses = answers.map(({ status }) => status);
    expect(statuses.slice(0, 4)).toEqual([401, 401, 401, 401]);
    // The lockout at the fourth failure, or the fifth when part of one was forgiven meanwhile.
    expect([401, 429]).toContain(statuses[4]);
    // The third and fourth failures are answered about 100 and 200 ms later.
    expect(answers[2]!.elapsedMs).toBeGreaterThanOrEqual(90);
    expect(answers[3]!.elapsedMs).toBeGreaterThanOrEqual(190);

    // Locked out: even the right key is not looked at.
    const locked = await get(metrics, guesser(OPERATOR_KEY));
    expect(locked.status).toBe(429);
    expect(Number(locked.retryAfter)).toBeGreaterThan(55);
    expect(Number(locked.retryAfter)).toBeLessThanOrEqual(60);
    expect(JSON.parse(locked.body)).toMatchObject({ error: 'too_many_requests' });
    expect((await get(`${harness.relay.url}/status/snapshot`, guesser())).status).toBe(429);

    // Another client address behind the same proxy: the right key is answered at once.
    const other = await get(metrics, {
      'x-forwarded-for': '203.0.113.10',
      ...bearer(OPERATOR_KEY),
    });
    expect(other.status).toBe(200);
    expect(other.elapsedMs).toBeLessThan(1_000);
    expect((await get(metrics, { 'x-forwarded-for': '203.0.113.10', ...bearer('wrong') })).status).toBe(401);

    // The locked-out address still opens streams with a right API key: a throttle of their own.
    const stream = new AbortController();
    const sse = await fetch(`${harness.relay.url}/v1/sse?channel=markets&markets=active`, {
      headers: { 'x-forwarded-for': '203.0.113.9', ...bearer('the-api-key') },
      signal: stream.signal,
    });
    expect(sse.status).toBe(200);
    stream.abort();
  });

  it('counts parallel guesses from a direct client at once, whatever X-Forwarded-For it writes', async () => {
    const harness = await start(
      edgeLimitsHarness(
        { authFreeFailures: 2, authLockoutFailures: 4, authLockoutMs: 60_000 },
        { operatorKey: OPERATOR_KEY },
      ),
    );
    const metrics = `${harness.relay.url}/metrics`;
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => get(metrics, bearer(`guess-${i}`), '127.0.0.2')),
    );
    const statuses = answers.map(({ status }) => status);
    // Four, or five when part of one failure was forgiven between them (as in the test above).
    const wrong = statuses.filter((status) => status === 401).length;
    expect(wrong).toBeGreaterThanOrEqual(4);
    expect(wrong).toBeLessThanOrEqual(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(40 - wrong);
    // Without trusted proxies the header is the client's own writing: still the locked-out peer.
    const spoofed = await get(
      metrics,
      { 'x-forwarded-for': '203.0.113.77', ...bearer(OPERATOR_KEY) },
      '127.0.0.2',
    );
    expect(spoofed.status).toBe(429);
    // The right key from another address.
    expect((await get(metrics, bearer(OPERATOR_KEY), '127.0.0.3')).status).toBe(200);
  });
});
