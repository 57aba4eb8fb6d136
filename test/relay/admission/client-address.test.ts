import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressGroup, clientAddress } from '../../../src/relay/admission/client-address.ts';

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

describe('addressGroup', () => {
  it('keeps IPv4 addresses whole and cuts IPv6 addresses to their prefix', () => {
    expect(addressGroup('203.0.113.7', 64)).toBe('203.0.113.7');
    expect(addressGroup('2001:db8:a:b:c:d:e:f', 64)).toBe('2001:db8:a:b::/64');
    expect(addressGroup('2001:db8::1', 64)).toBe('2001:db8:0:0::/64');
    expect(addressGroup('2001:db8:abcd::1', 40)).toBe('2001:db8:ab00::/40');
    expect(addressGroup('::1', 128)).toBe('::1');
    expect(addressGroup('64:ff9b::192.0.2.1', 96)).toBe('64:ff9b:0:0:0:0::/96');
    expect(addressGroup('fe80::1%eth0', 64)).toBe('fe80:0:0:0::/64');
    expect(addressGroup('not:an:address:::', 64)).toBe('not:an:address:::');
  });

  it('puts two addresses in one group exactly when their first bits agree', () => {
    const group16 = fc.integer({ min: 0, max: 0xffff });
    const address = fc.array(group16, { minLength: 8, maxLength: 8 });
    fc.assert(
      fc.property(address, address, fc.integer({ min: 16, max: 127 }), (a, b, bits) => {
        const text = (groups: number[]) => groups.map((g) => g.toString(16)).join(':');
        const value = (groups: number[]) => groups.reduce((sum, g) => (sum << 16n) | BigInt(g), 0n);
        const shift = BigInt(128 - bits);
        const same = value(a) >> shift === value(b) >> shift;
        expect(addressGroup(text(a), bits) === addressGroup(text(b), bits)).toBe(same);
      }),
    );
  });
});
