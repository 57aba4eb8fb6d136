import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clientAddress } from '../../../src/relay/admission/client-address.ts';

describe('clientAddress', () => {
  it('ignores X-Forwarded-For unless proxies are trusted', () => {
    expect(clientAddress('10.0.0.1', '1.2.3.4', 0)).toBe('10.0.0.1');
    expect(clientAddress('::ffff:10.0.0.1', undefined, 0)).toBe('10.0.0.1');
  });

  it('takes the entry the outermost trusted proxy appended', () => {
    expect(clientAddress('10.0.0.1', 'spoofed, 203.0.113.7', 1)).toBe('203.0.113.7');
    expect(clientAddress('10.0.0.1', 'spoofed, 203.0.113.7, 10.0.0.2', 2)).toBe('203.0.113.7');
    expect(clientAddress('10.0.0.1', ['spoofed', '203.0.113.7'], 1)).toBe('203.0.113.7');
    expect(clientAddress('10.0.0.1', '203.0.113.7', 3)).toBe('203.0.113.7');
    expect(clientAddress('10.0.0.1', undefined, 1)).toBe('10.0.0.1');
    expect(clientAddress('10.0.0.1', ' , ', 1)).toBe('10.0.0.1');
  });

  it('cannot be steered by what the client prepends', () => {
    fc.assert(
      fc.property(
        fc.array(fc.ipV4(), { maxLength: 5 }),
        fc.array(fc.ipV4(), { minLength: 1, maxLength: 3 }),
        (written, appended) => {
          const header = [...written, ...appended].join(', ');
          expect(clientAddress('10.0.0.1', header, appended.length)).toBe(appended[0]);
        },
      ),
    );
  });
});
