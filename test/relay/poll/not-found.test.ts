import { describe, expect, it } from 'vitest';
import type { CatalogueVerdict } from '../../../src/relay/admission/known-markets.ts';
import { NotFoundJudge, type UpstreamEvidence } from '../../../src/relay/poll/not-found.ts';
import { UpstreamHttpError, UpstreamTimeoutError } from '../../../src/upstream/errors.ts';

const BOOK = 'GET /clob/orderbook';
const ORACLE = 'GET /api/tokens/price/:feedId';
const market = { kind: 'market', value: 'm' } as const;
const feed = { kind: 'feed', value: '0xfeed' } as const;

function judge(
  upstream: Partial<{ verified: boolean; answering: string[]; services: string[] }>,
  verdict: CatalogueVerdict = 'unknown',
): NotFoundJudge {
  const evidence: UpstreamEvidence = {
    verified: upstream.verified ?? true,
    answers: (endpoint) => (upstream.answering ?? []).includes(endpoint),
    serviceAnswers: (endpoint) => (upstream.services ?? []).some((service) => endpoint.includes(service)),
  };
  return new NotFoundJudge(evidence, { loadsBegun: 1, verdict: () => verdict, loadSoon: () => {} });
}

const refused = (endpoint: string, status: number, code?: 'upstream_unavailable') =>
  new UpstreamHttpError(endpoint, status, code === undefined ? {} : { code });

describe('NotFoundJudge', () => {
  it('reads a 404 or 400 on a path that answers for other ids as the id being gone', () => {
    const answering = judge({ answering: [BOOK] });
    expect(answering.isGone(refused(BOOK, 404), market)).toBe(true);
    expect(answering.isGone(refused(BOOK, 400), market)).toBe(true);
    // Not a refusal of the id: another relay's answer, a 5xx, a 429, a timeout.
    expect(answering.isGone(refused(BOOK, 404, 'upstream_unavailable'), market)).toBe(false);
    expect(answering.isGone(refused(BOOK, 500), market)).toBe(false);
    expect(answering.isGone(refused(BOOK, 429), market)).toBe(false);
    expect(answering.isGone(new UpstreamTimeoutError(BOOK, 'slow'), market)).toBe(false);
  });

  it('never judges while upstream is not verified, whatever else it knows', () => {
    const unverified = judge({ verified: false, answering: [BOOK], services: ['/api'] }, 'not_listed');
    expect(unverified.isGone(refused(BOOK, 404), market)).toBe(false);
    expect(unverified.bareEntry('m', 0)).toBe('unpriced_market');
  });

  it('on a path that never answered, takes the catalogue for markets and the service for feeds', () => {
    expect(judge({}, 'listed').isGone(refused(BOOK, 404), market)).toBe(false);
    expect(judge({}, 'unknown').isGone(refused(BOOK, 404), market)).toBe(false);
    expect(judge({}, 'not_listed').isGone(refused(BOOK, 404), market)).toBe(true);
    expect(judge({}, 'not_listed').isGone(refused(ORACLE, 404), feed)).toBe(false);
    expect(judge({ services: ['/api'] }).isGone(refused(ORACLE, 400), feed)).toBe(true);
  });
});
