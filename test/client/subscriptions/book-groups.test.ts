/**
 * The SDK's grouped books (docs/client.md "Grouped books"): `subscribeBook(market, { group })` stays
 * equal to upstream's book summed by hand into the step over each transport, checksum-verified with
 * no resync, beside the ungrouped book of the same market; a step the relay does not offer throws
 * before anything is sent.
 */
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { bookGroups, type ConnectOptions } from '../../../packages/client/src/node.ts';
import { summedByHand } from '../../support/grouped-book.ts';
import { upstreamBook, useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';
import { connectRecorded, expectBooksEqualUpstream, recordResyncs, tickAndPublish } from '../sdk-support.ts';

const transports: [string, ConnectOptions][] = [
  ['compact WebSocket', {}],
  ['JSON WebSocket', { encoding: 'json' }],
  ['SSE', { transport: 'sse' }],
];

describe('client SDK: grouped books', () => {
  const { opened, start } = useHarness();

  it.each(transports)(
    'a 0.05 and a 0.01 book equal to upstream summed by hand over %s',
    async (_name, options) => {
      const harness = await start({ sim: { markets: 2 }, relay: { tuning: { staleAfterFactor: 50 } } });
      // Quoted in 0.001 (docs/upstream.md: every 4th market from the 2nd).
      const market = harness.sim.market.marketIds()[1]!;
      const { client, errors } = connectRecorded(harness.relay.url, options);
      opened.push(client);
      const full = client.subscribeBook(market);
      const grouped = client.subscribeBook(market, { group: '0.050' });
      const top = client.subscribeBook(market, { depth: 10, group: '0.01' });
      expect(grouped).not.toBe(full);
      expect(client.subscribeBook(market, { group: '0.05' })).toBe(grouped);
      expect(grouped.group).toBe('0.05');
      expect(full.group).toBeUndefined();
      const resyncs = recordResyncs([full, grouped, top]);
      for (let round = 0; round < 3; round++) {
        if (round > 0) await tickAndPublish(harness.sim, harness.relay, market);
        const book = await upstreamBook(harness.sim, market);
        for (const [stream, step] of [
          [grouped, '0.05'],
          [top, '0.01'],
        ] as const) {
          const expected = summedByHand(book, step, stream.depth);
          await waitFor(`group ${step} to equal upstream summed by hand`, () =>
            stream.status === 'live' && isDeepStrictEqual(stream.state, expected) ? true : undefined,
          );
        }
        await expectBooksEqualUpstream(harness.sim, [full]);
      }
      expect(grouped.state!.bids.length).toBeLessThan(full.state!.bids.length);
      expect(resyncs).toEqual([]);
      expect(errors).toEqual([]);
    },
  );

  it('moves a grouped book to another depth in place, keeping its group, on a compact connection', async () => {
    const harness = await start({ sim: { markets: 2 }, relay: { tuning: { staleAfterFactor: 50 } } });
    const market = harness.sim.market.marketIds()[1]!;
    const { client, errors } = connectRecorded(harness.relay.url);
    opened.push(client);
    const plain = client.subscribeBook(market);
    const grouped = client.subscribeBook(market, { depth: 10, group: '0.01' });
    const resyncs = recordResyncs([plain, grouped]);
    await waitFor('both books', () =>
      plain.state !== undefined && grouped.state !== undefined ? true : undefined,
    );
    await grouped.update({ depth: 5 });
    expect([grouped.depth, grouped.group]).toEqual([5, '0.01']);
    await tickAndPublish(harness.sim, harness.relay, market);
    const expected = summedByHand(await upstreamBook(harness.sim, market), '0.01', 5);
    await waitFor('the grouped book at its new depth', () =>
      grouped.status === 'live' && isDeepStrictEqual(grouped.state, expected) ? true : undefined,
    );
    await expectBooksEqualUpstream(harness.sim, [plain]);
    expect(resyncs).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('throws on a step the relay does not offer, naming the offered ones', async () => {
    const harness = await start({ sim: { markets: 1 } });
    const [market] = harness.sim.market.marketIds() as [string];
    const { client } = connectRecorded(harness.relay.url);
    opened.push(client);
    for (const group of ['0.03', '0', '-0.05', '.05', 0.05 as unknown as string]) {
      expect(() => client.subscribeBook(market, { group }), String(group)).toThrow(TypeError);
      expect(() => client.subscribeBook(market, { group }), String(group)).toThrow(
        `"${bookGroups.join('", "')}"`,
      );
    }
    expect(client.streams).toHaveLength(0);
  });
});
