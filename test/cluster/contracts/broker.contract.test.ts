/**
 * The contract every Broker keeps (relay/coordination/broker.ts), run against each implementation:
 * a relay alone (local) and a relay in cluster mode that happens to be alone, on one Redis and on a
 * Redis Cluster of three primaries. The poller pool, the session and the operators' view rely on
 * exactly this, and never ask which one they have.
 */
import { describe, expect, it } from 'vitest';
import type { SharedResult } from '../../../src/relay/coordination/shared-result.ts';
import { NOTHING_FETCHED } from '../../../src/relay/streams/registry.ts';
import { useBrokerImplementations } from '../../support/cluster/brokers.ts';
import { waitFor } from '../../support/wait-for.ts';

const implementations = useBrokerImplementations();

describe.each(implementations)('Broker contract: %s', (_name, create) => {
  it('lets a relay alone poll every target, and renew', async () => {
    const broker = await create();
    expect(await broker.claim('book:a', 1_000)).toBe(true);
    expect(await broker.claim('book:a', 1_000)).toBe(true);
    expect(await broker.claim('price:a', 1_000)).toBe(true);
    expect(broker.status()).toMatchObject({ connected: true, owned: 2, lastError: undefined });
    await broker.close();
  });

  it('forgets a released target and everything on close', async () => {
    const broker = await create();
    await broker.claim('book:b', 1_000);
    await broker.claim('book:c', 1_000);
    broker.forget('book:b');
    expect(broker.status().owned).toBe(1);
    broker.forget('book:never-claimed');
    await broker.close();
    expect(broker.status().owned).toBe(0);
  });

  it('accepts follow, share and forget without a cluster to talk to', async () => {
    const broker = await create();
    const received: SharedResult[] = [];
    broker.follow('book:d', (result) => received.push(result));
    broker.share('book:d', () => ({ kind: 'not_found' }));
    broker.forget('book:d');
    expect(received).toEqual([]);
    await broker.close();
  });

  it('hands a follower what another relay shares, every response once it says at a claim that it reads them', async () => {
    // The holder first: it then holds the lease whatever the follower's view of the relays.
    const [holder, follower] = [await create(), await create()];
    const received: SharedResult[] = [];
    let wanted = false;
    let asked = 0;
    follower.follow(
      'book:wanted',
      (result) => received.push(result),
      () => {
        asked += 1;
        return wanted;
      },
    );
    const shared = (): SharedResult => ({ kind: 'response', receivedAt: 1, body: null });
    const relayed = follower.status().mode === 'redis';
    if (relayed) {
      expect(await holder.claim('book:wanted', 1_000)).toBe(true);
      // Unasked, a response is still shared now and then; the follower's subscription is made in
      // the background, so until one arrives.
      await waitFor('a response to reach the follower, and be left unread', () => {
        holder.share('book:wanted', shared);
        return asked > 0;
      });
      expect(received).toEqual([]);
      wanted = true;
      expect(await follower.claim('book:wanted', 1_000)).toBe(false);
      expect(await holder.claim('book:wanted', 1_000)).toBe(true);
      for (let i = 0; i < 3; i += 1) holder.share('book:wanted', shared);
      await waitFor('every wanted response to be read', () => received.length >= 3);
    } else holder.share('book:wanted', shared);
    expect(received.length > 0).toBe(relayed);
    await Promise.all([follower.close(), holder.close()]);
  });

  it('has no history of the streams each relay numbers itself: resumed from the rings alone, at once', async () => {
    const broker = await create();
    const fetched = broker.history.fetch('trades', undefined, [['m', { epoch: 'e', seq: 1 }]]);
    expect(fetched).toBe(NOTHING_FETCHED);
    await broker.close();
  });

  it('gives upstream requests a gate that lets them through within the budget', async () => {
    const broker = await create();
    const gate = broker.rateGate(100);
    await gate.acquire(AbortSignal.timeout(2_000));
    const share = broker.budgetShare();
    if (share !== undefined) expect(share).toBeGreaterThanOrEqual(0);
    if (share !== undefined) expect(share).toBeLessThanOrEqual(1);
    await broker.close();
  });

  it('reports itself as data: a cluster part in /status exactly when it has gauges of its own', async () => {
    const broker = await create();
    broker.rateGate(100);
    const report = broker.report(true);
    const names = broker.gauges().map(({ name }) => name);
    expect(new Set(names).size).toBe(names.length);
    expect(report.redis === undefined).toBe(names.length === 0);
    expect(report.redis?.lastError).toBeUndefined(); // redacted
    for (const { value } of broker.gauges()) expect(Number.isFinite(value())).toBe(true);
    await broker.close();
  });
});
