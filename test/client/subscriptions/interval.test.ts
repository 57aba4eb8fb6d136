/**
 * The SDK's `{ interval }` option (docs/client.md, docs/protocol.md "Per-subscription options"):
 * a paced book stays equal to upstream (checksum-verified, no resync) from conflated updates,
 * each naming the `seq` it applies to; the full book beside it gets every update; a repeated subscribe with another interval
 * re-paces the same object; a value the relay would refuse throws before anything is sent.
 */
import { describe, expect, it } from 'vitest';
import { useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';
import { connectRecorded, expectBooksEqualUpstream, recordResyncs, tickAndPublish } from '../sdk-support.ts';

describe('client SDK: interval', () => {
  const { opened, start } = useHarness();

  it('keeps a paced book equal to upstream, by conflated updates', async () => {
    const harness = await start({ sim: { markets: 1 } });
    const [market] = harness.sim.market.marketIds() as [string];
    const { client, errors } = connectRecorded(harness.relay.url, { encoding: 'json' });
    opened.push(client);
    const full = client.subscribeBook(market);
    const paced = client.subscribeBook(market, { depth: 10, interval: 200 });
    expect(paced.interval).toBe(200);
    const kinds: string[] = [];
    paced.on('snapshot', () => kinds.push('snapshot'));
    // A conflated update names the seq it applies to; one change since comes as the stream's own update.
    paced.on('update', ({ message }) =>
      kinds.push(message.prev_seq === undefined ? 'one change' : 'conflated'),
    );
    const resyncs = recordResyncs([full, paced]);
    await expectBooksEqualUpstream(harness.sim, [full, paced]);
    for (let round = 0; round < 4; round++) await tickAndPublish(harness.sim, harness.relay, market);
    await expectBooksEqualUpstream(harness.sim, [full, paced]);
    expect(kinds[0]).toBe('snapshot');
    expect(kinds.slice(1)).not.toContain('snapshot');
    // Asked again with another interval: the same object, paced anew.
    expect(client.subscribeBook(market, { depth: 10, interval: 1_000 })).toBe(paced);
    expect(paced.interval).toBe(1_000);
    const stream = harness.relay.registry.get({ channel: 'book', market, depth: 10 })!;
    await waitFor('the relay to pace the stream anew', () =>
      [...stream.subscribers].some((s) => stream.subscribers.intervalOf(s) === 1_000),
    );
    expect(resyncs).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('throws on an interval the relay would refuse', async () => {
    const harness = await start({ sim: { markets: 1 } });
    const [market] = harness.sim.market.marketIds() as [string];
    const { client } = connectRecorded(harness.relay.url);
    opened.push(client);
    for (const interval of [0, 99, 60_001, 1.5, 36_000_000])
      expect(() => client.subscribePrice(market, { interval })).toThrow(/interval/);
    expect(() => client.subscribeBook(market, { interval: '1000' as unknown as number })).toThrow(/interval/);
  });
});
