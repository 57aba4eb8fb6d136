/**
 * The market catalogue's verdicts (relay/admission/known-markets.ts): a complete list that lacks an
 * id says `not_listed`, except to a stream that began after that list's load did, which may be of
 * a market new upstream (`not_listed_earlier`); asking a verdict never causes a load, and an
 * undecided bare price entry brings the next one forward at most once per gap, whatever the ids.
 */
import { describe, expect, it } from 'vitest';
import {
  type CatalogueSource,
  EARLY_LOAD_GAP_MS,
  KnownMarkets,
} from '../../../src/relay/admission/known-markets.ts';
import { NotFoundJudge } from '../../../src/relay/poll/not-found.ts';
import type { MarketsResponse } from '../../../src/upstream/schemas.ts';

const OLD = '00000000-0000-4000-8000-000000000001';
const NEW = '00000000-0000-4000-8000-000000000002';
const BOGUS = '00000000-0000-4000-8000-000000000003';

/** A one-page catalogue whose markets the test sets, counting the pages read. */
class Catalogue implements CatalogueSource {
  ids = [OLD];
  pagesRead = 0;

  markets(): Promise<MarketsResponse> {
    this.pagesRead += 1;
    return Promise.resolve({
      markets: this.ids.map((market_id) => ({ market_id })),
      pagination: { hasMore: false },
    } as unknown as MarketsResponse);
  }
}

/** A catalogue of `count` markets served at most `cap` a page, whatever `limit` asks. */
function cappedCatalogue(count: number, cap: number): CatalogueSource & { asked: number[] } {
  const ids = Array.from(
    { length: count },
    (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  );
  const asked: number[] = [];
  return {
    asked,
    markets({ limit, offset }) {
      asked.push(offset);
      const page = ids.slice(offset, offset + Math.min(limit, cap));
      return Promise.resolve({
        markets: page.map((market_id) => ({ market_id })),
        pagination: {
          limit: Math.min(limit, cap),
          offset,
          total: count,
          hasMore: offset + page.length < count,
        },
      } as unknown as MarketsResponse);
    },
  };
}

const verified = { verified: true, answers: () => false, serviceAnswers: () => false };

describe('KnownMarkets', () => {
  it('says "not listed" to a stream only from a list whose load began after the stream did', async () => {
    const source = new Catalogue();
    const known = new KnownMarkets(source);
    await known.refresh();
    expect(known.verdict(OLD)).toBe('listed');
    expect(known.verdict(NEW)).toBe('not_listed');

    // Upstream lists a new market; a stream of it begins before the next load.
    source.ids = [OLD, NEW];
    const since = known.loadsBegun;
    expect(known.verdict(NEW, since)).toBe('not_listed_earlier');
    expect(known.verdict(BOGUS, since)).toBe('not_listed_earlier');
    // Judged as often as asked, nothing is loaded for it.
    expect(source.pagesRead).toBe(1);

    await known.refresh();
    expect(known.verdict(NEW, since)).toBe('listed');
    expect(known.verdict(BOGUS, since)).toBe('not_listed');
    expect(source.pagesRead).toBe(2);
  });

  it.each([1, 20, 99])('lists every market however few upstream serves a page (%i)', async (cap) => {
    const source = cappedCatalogue(45, cap);
    const known = new KnownMarkets(source);
    await known.refresh();
    expect(known.size).toBe(45);
    expect(known.verdict('00000000-0000-4000-8000-000000000044')).toBe('listed');
    expect(known.verdict('00000000-0000-4000-8000-000000009999')).toBe('not_listed');
    // Each page asked where the markets served so far end.
    expect(source.asked).toEqual(Array.from({ length: Math.ceil(45 / cap) }, (_, i) => i * cap));
  });

  it('a load that fails keeps the list it had, and so its verdict', async () => {
    const source = new Catalogue();
    const known = new KnownMarkets(source);
    await known.refresh();
    const since = known.loadsBegun;
    source.markets = () => Promise.reject(new Error('upstream down'));
    await known.refresh();
    expect(known.verdict(BOGUS, since)).toBe('not_listed_earlier');
    expect(known.verdict(BOGUS)).toBe('not_listed');
  });

  it("is what the judge of a bare price entry reads, with the stream's own start", async () => {
    const source = new Catalogue();
    const known = new KnownMarkets(source);
    const judge = new NotFoundJudge(verified, known);
    expect(judge.bareEntry(BOGUS, judge.catalogueLoads())).toBe('unpriced_market'); // nothing loaded yet
    await known.refresh();
    const since = judge.catalogueLoads();
    expect(judge.bareEntry(BOGUS, since - 1)).toBe('no_market');
    expect(judge.bareEntry(BOGUS, since)).toBe('undecided');
    expect(judge.bareEntry(OLD, since)).toBe('unpriced_market');
    await known.refresh();
    expect(judge.bareEntry(BOGUS, since)).toBe('no_market');
    const unverified = new NotFoundJudge({ ...verified, verified: false }, known);
    expect(unverified.bareEntry(BOGUS, since)).toBe('unpriced_market');
  });

  it('brings the next load forward for an undecided entry, at most once per gap whatever the ids', async () => {
    let now = 1_000_000;
    const source = new Catalogue();
    const known = new KnownMarkets(source, () => now);
    const judge = new NotFoundJudge(verified, known);
    await known.refresh();
    const since = judge.catalogueLoads();
    source.ids = [OLD, NEW];

    // Within the gap of the last load's start: undecided, and nothing loads, however many ids ask.
    now += EARLY_LOAD_GAP_MS - 1;
    for (let i = 0; i < 100; i++) expect(judge.bareEntry(BOGUS, since)).toBe('undecided');
    expect(judge.bareEntry(NEW, since)).toBe('undecided');
    expect(source.pagesRead).toBe(1);

    // Past it: one load, begun after the streams did, decides both.
    now += 1;
    for (let i = 0; i < 100; i++) judge.bareEntry(BOGUS, since);
    await known.refresh(); // the load the entries started (one at a time: this joins it)
    expect(source.pagesRead).toBe(2);
    expect(judge.bareEntry(NEW, since)).toBe('unpriced_market');
    expect(judge.bareEntry(BOGUS, since)).toBe('no_market');
  });
});
