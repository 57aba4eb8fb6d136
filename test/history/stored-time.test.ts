import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { storedTime } from '../../src/history/stored-time.ts';

/** What a stored time must give back: the text as sent, from its milliseconds or its kept text. */
function readBack(stored: { ms: number; text: string | undefined }): string {
  return stored.text ?? new Date(stored.ms).toISOString();
}

describe('storedTime', () => {
  it('keeps no text for a millisecond ISO time, and gives every such time back exactly', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1970-01-01'), max: new Date('9999-12-31'), noInvalidDate: true }),
        (date) => {
          const text = date.toISOString();
          const stored = storedTime(text);
          expect(stored).toEqual({ ms: date.getTime(), text: undefined });
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('keeps the text of anything the milliseconds would not give back', () => {
    for (const text of [
      '2026-02-30T00:00:00.000Z', // V8 rolls it into March
      '2026-02-28T24:00:00.000Z',
      '2026-12-02T07:00:00Z',
      '2026-12-02T07:00:00.123456Z',
      '2026-12-02T08:00:00.000+01:00',
    ]) {
      const stored = storedTime(text);
      expect(stored.text).toBe(text);
      expect(readBack(stored)).toBe(text);
    }
    expect(storedTime('not a time')).toEqual({ ms: 0, text: 'not a time' });
  });

  it('gives back any text that parses, whatever its form', () => {
    fc.assert(
      fc.property(
        fc.tuple(
          fc.integer({ min: 1970, max: 2100 }),
          fc.integer({ min: 0, max: 13 }),
          fc.integer({ min: 0, max: 32 }),
          fc.integer({ min: 0, max: 25 }),
          fc.integer({ min: 0, max: 999 }),
        ),
        ([year, month, day, hour, ms]) => {
          const pad = (n: number, width = 2) => String(n).padStart(width, '0');
          const text = `${year}-${pad(month)}-${pad(day)}T${pad(hour)}:00:00.${pad(ms, 3)}Z`;
          const stored = storedTime(text);
          if (stored.ms === 0 && stored.text === text) return;
          expect(readBack(stored)).toBe(text);
        },
      ),
      { numRuns: 3_000 },
    );
  });
});
