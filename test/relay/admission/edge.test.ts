import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EdgeAdmission, type EdgeLimits } from '../../../src/relay/admission/edge.ts';

const limits: EdgeLimits = {
  maxConnectionsPerAddress: 3,
  connectionsPerSecondPerAddress: 2,
  connectionBurstPerAddress: 4,
  maxConnectionsPerKey: 5,
  maxPendingConnections: 6,
  maxPendingPerAddress: 2,
  headersTimeoutMs: 1_000,
  trustedProxyDepth: 0,
  ipv6PrefixLength: 64,
  authFreeFailures: 2,
  authLockoutFailures: 4,
  authLockoutMs: 10_000,
};

describe('EdgeAdmission', () => {
  it('caps open connections per address, and frees a slot when one closes', () => {
    const clock = { t: 0 };
    const admission = new EdgeAdmission(limits, () => clock.t);
    for (let i = 0; i < 3; i += 1) {
      expect(admission.admitConnection('a', undefined)).toBe('ok');
      admission.opened('a', undefined);
    }
    expect(admission.admitConnection('a', undefined)).toBe('address');
    expect(admission.admitConnection('b', undefined)).toBe('ok'); // another address is not affected
    admission.closed('a', undefined);
    clock.t += 1_000;
    expect(admission.admitConnection('a', undefined)).toBe('ok');
  });

  it('limits the connection rate per address with a burst', () => {
    const clock = { t: 0 };
    const admission = new EdgeAdmission({ ...limits, maxConnectionsPerAddress: 1_000 }, () => clock.t);
    const verdicts = Array.from({ length: 10 }, () => admission.admitConnection('a', undefined));
    expect(verdicts.filter((verdict) => verdict === 'ok')).toHaveLength(4);
    expect(verdicts.slice(4).every((verdict) => verdict === 'rate')).toBe(true);
    clock.t += 500;
    expect(admission.admitConnection('a', undefined)).toBe('ok');
    expect(admission.admitConnection('a', undefined)).toBe('rate');
  });

  it('caps connections per API key across addresses', () => {
    const admission = new EdgeAdmission({ ...limits, maxConnectionsPerKey: 2 });
    for (const address of ['a', 'b']) {
      expect(admission.admitConnection(address, 'k')).toBe('ok');
      admission.opened(address, 'k');
    }
    expect(admission.admitConnection('c', 'k')).toBe('key');
    expect(admission.admitConnection('c', 'other')).toBe('ok');
  });

  it('caps connections still sending their first request per peer, and sheds the least-sent when full', () => {
    const clock = { t: 0 };
    const admission = new EdgeAdmission(limits, () => clock.t);
    const entry = (group: string, sent = 0) => ({ group, openedAt: clock.t, bytesRead: () => sent });
    const a = [1, 2, 3].map(() => entry('a'));
    expect(a.map((e) => admission.openPending(e).admitted)).toEqual([true, true, false]);
    admission.settlePending(a[0]!);
    expect(admission.openPending(entry('a')).admitted).toBe(true);
    clock.t += 1;
    const busy = entry('b', 100);
    for (const e of [busy, entry('b'), entry('c', 5), entry('c', 5)]) admission.openPending(e);
    expect(admission.pending).toBe(6);
    // Full: the newcomer gets in, the oldest of those that sent nothing is shed.
    const verdict = admission.openPending(entry('d'));
    expect(verdict.admitted).toBe(true);
    expect(verdict.shed).toEqual([a[1]]);
    expect(admission.pending).toBe(6);

    const proxied = new EdgeAdmission({ ...limits, trustedProxyDepth: 1 });
    expect([1, 2, 3, 4].every(() => proxied.openPending(entry('proxy')).admitted)).toBe(true);
  });

  it('counts IPv6 clients per /64 (configurable) for every per-address limit', () => {
    const admission = new EdgeAdmission({ ...limits, connectionBurstPerAddress: 100 });
    for (const host of ['1', '2', 'ab:1:2']) {
      const address = `2001:db8:1:2::${host}`;
      expect(admission.admitConnection(address, undefined)).toBe('ok');
      admission.opened(address, undefined);
    }
    expect(admission.admitConnection('2001:db8:1:2:ab::9', undefined)).toBe('address');
    expect(admission.admitConnection('2001:db8:1:3::1', undefined)).toBe('ok');
    const perAddress = new EdgeAdmission({ ...limits, ipv6PrefixLength: 128 });
    expect(perAddress.group('2001:db8::1')).not.toBe(perAddress.group('2001:db8::2'));
  });

  it('forgets everything about an address once it is gone and its rate has recovered', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 50 }), (addresses) => {
        const clock = { t: 0 };
        const admission = new EdgeAdmission({ ...limits, maxConnectionsPerAddress: 100 }, () => clock.t);
        const open: string[] = [];
        for (const address of addresses) {
          if (admission.admitConnection(address, 'k') === 'ok') {
            admission.opened(address, 'k');
            open.push(address);
          }
        }
        for (const address of open) admission.closed(address, 'k');
        clock.t += 60_000;
        admission.prune();
        expect(admission.trackedAddresses).toBe(0);
      }),
    );
  });
});
