/**
 * The format table of what a relay writes to Redis (src/relay/coordination/redis/formats.ts): the
 * newest format written, it and the one before read, anything else skipped, counted by kind and
 * told once per kind; a payload's writer and format read back whatever its text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type FormattedKind,
  type RedisFormat,
  RedisFormats,
  shippedFormats,
  splitPayload,
} from '../../../src/relay/coordination/redis/formats.ts';

const reversed: RedisFormat = {
  version: 3,
  changes: ['message', 'state', 'history', 'budget'],
  encode: (_kind, text) => [...text].reverse().join(''),
  decode: (_kind, text) => [...text].reverse().join(''),
};

describe('Redis formats', () => {
  it('writes the newest format and reads it and the one before, untagged values as format 1', () => {
    const shipped = new RedisFormats();
    expect(shipped.written.version).toBe(2);
    expect(shipped.readable('message')).toBe('1,2');
    expect(shipped.readable('roster')).toBe('1,2');
    expect(shipped.reader('state', undefined)?.version).toBe(1);
    expect(shipped.reader('state', '2')?.version).toBe(2);

    const next = new RedisFormats([...shippedFormats, reversed]);
    expect(next.written).toBe(reversed);
    expect(next.writer('state')).toBe(reversed);
    expect(next.readable('budget')).toBe('2,3');
    expect(next.reader('message', undefined)).toBeUndefined();
    expect(next.reader('message', '2')?.version).toBe(2);
  });

  it('writes the kinds a format leaves as they were in the format before, which its relays read', () => {
    const messagesOnly: RedisFormat = { ...reversed, changes: ['message'] };
    const next = new RedisFormats([...shippedFormats, messagesOnly]);
    expect(next.writer('message')).toBe(messagesOnly);
    expect(next.readable('message')).toBe('2,3');
    expect(next.writer('state').version).toBe(2);
    expect(next.readable('state')).toBe('2');
    expect(next.reader('budget', '2')?.version).toBe(2);
    // The relay as a whole (its lease, its place in the roster) is of the new format.
    expect(next.written).toBe(messagesOnly);
    expect(next.readable('roster')).toBe('2,3');
    // A relay of this release reads all it writes but its messages.
    const current = new RedisFormats();
    expect(current.reader('state', String(next.writer('state').version))).toBeDefined();
    expect(current.reader('message', String(next.writer('message').version))).toBeUndefined();
  });

  it('skips a format it does not read: counted by kind, told once per kind', () => {
    const told: [FormattedKind, string | undefined][] = [];
    const formats = new RedisFormats(shippedFormats, (kind, version) => told.push([kind, version]));
    expect(formats.reader('message', '3')).toBeUndefined();
    expect(formats.reader('message', '3')).toBeUndefined();
    expect(formats.reader('history', 'x')).toBeUndefined();
    formats.skip('roster', undefined, 2);
    formats.skip('budget', undefined, 0);
    expect(Object.fromEntries(formats.skipped())).toEqual({ message: 2, history: 1, roster: 2 });
    expect(told).toEqual([
      ['message', '3'],
      ['history', 'x'],
      ['roster', undefined],
    ]);
  });

  it('refuses an empty table', () => {
    expect(() => new RedisFormats([])).toThrow(/no Redis format/);
  });

  it("reads back a payload's writer, format and text, and an untagged one as format 1", () => {
    const next = new RedisFormats([...shippedFormats, reversed]);
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9a-f]{1,16}$/), fc.string(), (instance, text) => {
        const split = splitPayload(next.payload(instance, text));
        expect(split).toEqual({ writer: instance, version: '3', text: reversed.encode('message', text) });
        expect(reversed.decode('message', split!.text)).toBe(text);
        expect(splitPayload(`${instance} ${text}`)).toEqual({ writer: instance, version: undefined, text });
      }),
    );
    expect(splitPayload('no-separator')).toBeUndefined();
  });
});
