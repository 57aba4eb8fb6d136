import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bearerToken, isOneOf } from '../../src/util/secrets.ts';

describe('bearerToken', () => {
  it('reads the scheme in any case (RFC 9110: schemes are case-insensitive)', () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      expect(bearerToken(`${scheme} k-123`)).toBe('k-123');
    }
    expect(bearerToken('Bearer   spaced  ')).toBe('spaced');
  });

  it('refuses other schemes, a missing token and a token with spaces', () => {
    for (const header of [undefined, '', 'Basic abc', 'Bearer', 'Bearer ', 'Bearerabc', 'Bearer a b']) {
      expect(bearerToken(header)).toBeUndefined();
    }
  });
});

describe('isOneOf', () => {
  it('finds exactly the listed secrets', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ minLength: 1 }), { minLength: 1 }), fc.string(), (secrets, other) => {
        for (const secret of secrets) expect(isOneOf(secrets, secret)).toBe(true);
        expect(isOneOf(secrets, other)).toBe(secrets.includes(other));
      }),
    );
  });
});
