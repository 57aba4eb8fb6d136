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

  it('caps connections still sending their first request, in all and per peer (not behind proxies)', () => {
    const admission = new EdgeAdmission(limits);
    expect([1, 2, 3].map(() => admission.openPending('a'))).toEqual([true, true, false]);
    admission.settlePending('a');
    expect(admission.openPending('a')).toBe(true);
    for (const peer of ['b', 'b', 'c', 'c']) admission.openPending(peer);
    expect(admission.pending).toBe(6);
    expect(admission.openPending('d')).toBe(false);

    const proxied = new EdgeAdmission({ ...limits, trustedProxyDepth: 1 });
    expect([1, 2, 3, 4].every(() => proxied.openPending('proxy'))).toBe(true);
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
