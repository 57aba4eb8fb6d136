/**
 * Honest freshness (protocol.md "`status`"): when polls fail for longer than staleAfterMs the
 * stream says `stale`, keeps its last state, and says `live` again on the next successful poll,
 * which also sends any change as an ordinary update (no new snapshot, no gap).
 */
import { describe, expect, it } from 'vitest';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { expectedBook, type Harness, upstreamBook, useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

describe('stream freshness', () => {
  let harness: Harness;
  const { opened, start: startTestHarness } = useHarness();

  it('goes stale while upstream fails and live again after, continuing the same seq', async () => {
    harness = await startTestHarness({ sim: { markets: 2 }, relay: { tuning: { upstreamRetries: 0 } } });
    const market = harness.sim.market.marketIds()[0]!;
    const states: string[] = [];
    harness.relay.events.on('stream:state', ({ state }) => states.push(state));
    const client = await ProtocolClient.connect(harness.relay.url);
    opened.push(client);
    await client.request({ op: 'subscribe', channel: 'book', markets: [market] });
    await client.request({ op: 'subscribe', channel: 'price', markets: [market] });
    await waitFor('snapshots', () => client.view('book', market) && client.view('price', market));

    harness.sim.setFaults({ errorRate: 1 });
    harness.sim.tick();
    const lastStatus = (channel: string) => client.of('status').findLast((s) => s.channel === channel);
    // A poll already in flight when the fault started may still succeed, so wait for the settled state.
    await waitFor(
      'both streams stale',
      () => lastStatus('book')?.state === 'stale' && lastStatus('price')?.state === 'stale',
    );
    expect(lastStatus('book')).toMatchObject({
      market,
      depth: null,
      reason: 'upstream error', // a stable public reason; the HTTP status goes to the log
    });
    expect(lastStatus('price')).toMatchObject({ market, reason: 'upstream error' });
    const seqWhileStale = client.view('book', market)!.seq;
    harness.sim.tick();
    await waitFor('a failed poll after the tick', () =>
      harness.sim.requests.findLast((r) => r.path === '/clob/orderbook')?.status === 500 ? true : undefined,
    );
    // The last state stays valid as last known: nothing was sent for the failed polls.
    expect(client.view('book', market)!.seq).toBe(seqWhileStale);

    harness.sim.setFaults({ errorRate: 0 });
    await waitFor(
      'both streams live',
      () => lastStatus('book')?.state === 'live' && lastStatus('price')?.state === 'live',
    );
    const expected = expectedBook(await upstreamBook(harness.sim, market), null);
    await waitFor('the changes made during the outage', () =>
      JSON.stringify(client.view('book', market)!.state) === JSON.stringify(expected) ? true : undefined,
    );
    expect(client.of('snapshot').filter((m) => m.channel === 'book')).toHaveLength(1);
    expect(client.violations).toEqual([]);
    expect(states).toEqual(expect.arrayContaining(['stale', 'live']));
  });
});

describe('a stream upstream cannot serve at all', () => {
  const { opened, start: startTestHarness } = useHarness();

  it('answers upstream_unavailable, then delivers the snapshot once upstream is back', async () => {
    const harness = await startTestHarness({
      sim: { markets: 2 },
      relay: { tuning: { upstreamRetries: 0 } },
    });
    const client = await ProtocolClient.connect(harness.relay.url);
    opened.push(client);
    const market = harness.sim.market.marketIds()[1]!;
    harness.sim.setFaults({ errorRate: 1 });
    await client.request({ op: 'subscribe', channel: 'book', markets: [market] });
    await waitFor('upstream_unavailable', () =>
      client.of('error').find((e) => e.code === 'upstream_unavailable'),
    );
    expect(client.of('error')[0]).toMatchObject({
      channel: 'book',
      market,
      message: 'upstream is unavailable: upstream error',
    });
    expect(client.of('status')[0]).toMatchObject({ market, state: 'stale' });
    harness.sim.setFaults({ errorRate: 0 });
    await waitFor('the first snapshot', () => client.view('book', market));
    expect(client.view('book', market)!.seq).toBe(1);
  });
});
