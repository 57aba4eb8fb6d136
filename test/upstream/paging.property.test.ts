/**
 * Reading a paginated list as upstream serves it (upstream/paging.ts): whatever page size upstream
 * serves (fewer entries than asked, or more), every entry up to the bound is read once and in
 * order, and the read says whether it reached the end.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ReadPage, readPages } from '../../src/upstream/paging.ts';
import { propertyRuns } from '../support/property-runs.ts';

/** A list of `length` entries served `cap` a page at most, or `cap` whatever was asked. */
function listing(length: number, cap: number, ignoresLimit: boolean) {
  const list = Array.from({ length }, (_, i) => i);
  const asked: Array<{ offset: number; limit: number }> = [];
  const read: ReadPage<number> = async (offset, limit) => {
    asked.push({ offset, limit });
    const entries = list.slice(offset, offset + (ignoresLimit ? cap : Math.min(limit, cap)));
    return { entries, hasMore: offset + entries.length < length };
  };
  return { list, asked, read };
}

describe('readPages', () => {
  it('reads every entry up to the bound once, in order, whatever page size upstream serves', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          length: fc.nat(600),
          cap: fc.integer({ min: 1, max: 100 }),
          ignoresLimit: fc.boolean(),
          limit: fc.integer({ min: 1, max: 100 }),
          maxEntries: fc.integer({ min: 1, max: 700 }),
          from: fc.nat(50),
        }),
        async ({ length, cap, ignoresLimit, limit, maxEntries, from }) => {
          const { list, asked, read } = listing(length, cap, ignoresLimit);
          const seen: number[] = [];
          const result = await readPages(read, { from, limit, maxEntries }, (page, offset) => {
            expect(page.entries[0] ?? offset).toBe(offset);
            seen.push(...page.entries);
          });
          const available = Math.max(0, length - from);
          const wanted = Math.min(available, maxEntries);
          // Contiguous from `from`: nothing skipped, nothing twice.
          expect(seen).toEqual(list.slice(from, from + seen.length));
          expect(seen.length).toBeGreaterThanOrEqual(wanted);
          // Only an upstream serving more than asked brings more than the bound.
          if (!ignoresLimit) expect(seen.length).toBe(wanted);
          expect(result).toMatchObject({
            entries: seen.length,
            end: from + seen.length,
            requests: asked.length,
          });
          expect(result.stopped).toBe(seen.length >= available ? 'end' : 'bound');
          // Each request asks where the last one's entries ended, never beyond the bound.
          let next = from;
          for (const request of asked) {
            expect(request.offset).toBe(next);
            expect(request.limit).toBeLessThanOrEqual(limit);
            expect(request.limit).toBeGreaterThan(0);
            next += Math.min(ignoresLimit ? cap : Math.min(request.limit, cap), Math.max(0, length - next));
          }
        },
      ),
      { numRuns: propertyRuns(300) },
    );
  });

  it('stops when the caller says so, after handing it that page', async () => {
    const { read, asked } = listing(500, 20, false);
    const seen: number[] = [];
    const result = await readPages(read, { limit: 100, maxEntries: 1_000 }, (page) => {
      seen.push(...page.entries);
      return seen.includes(45);
    });
    expect(result).toEqual({ stopped: 'caller', requests: 3, entries: 60, end: 60 });
    expect(asked.map((request) => request.offset)).toEqual([0, 20, 40]);
  });

  it('stops at an empty page even when upstream says there is more', async () => {
    const read: ReadPage<number> = async (offset) => ({
      entries: offset < 30 ? [offset, offset + 1, offset + 2].slice(0, 30 - offset) : [],
      hasMore: true,
    });
    const result = await readPages(read, { limit: 100, maxEntries: 1_000 }, () => undefined);
    expect(result).toEqual({ stopped: 'end', requests: 11, entries: 30, end: 30 });
  });
});
