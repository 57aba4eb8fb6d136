/**
 * Time from upstream cannot poison a stream: responses are ordered by when the relay asked for
 * them, so a book stamped far in the future is passed on as data and the next, sanely stamped,
 * responses still reach clients within a few polls.
 */
import { describe, expect, it } from 'vitest';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { expectedBook, upstreamBook, useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

const FAR_FUTURE = Date.parse('2099-01-01T00:00:00.000Z');

describe('an absurd upstream timestamp', () => {
  const { opened, start } = useHarness();

  it('is passed on as data, and later responses still update the streams', async () => {
    const harness = await start({ sim: { markets: 1 } });
    const market = harness.sim.market.marketIds()[0]!;
    const simMarket = harness.sim.market.market(market)!;
    const client = await ProtocolClient.connect(harness.relay.url);
    opened.push(client);
    await client.request({ op: 'subscribe', channel: 'book', markets: [market] });
    await client.request({ op: 'subscribe', channel: 'price', markets: [market] });
    await waitFor('snapshots', () => client.view('book', market) && client.view('price', market));

    simMarket.timestamp = FAR_FUTURE;
    harness.sim.tick();
    await waitFor('the far-future book', () => client.view('book', market)!.ts.startsWith('2099'));

    // Upstream's clock comes back; its next books are older than the one already applied.
    simMarket.timestamp = Date.now();
    harness.sim.tick();
    const bookPolls = () =>
      harness.sim.requests.filter((r) => r.path === '/clob/orderbook' && r.query.market_id === market).length;
    const pollsBefore = bookPolls();
    const expected = JSON.stringify(expectedBook(await upstreamBook(harness.sim, market), null));
    const pollsToRecover = await waitFor('the book after the clock came back', () =>
      JSON.stringify(client.view('book', market)!.state) === expected ? bookPolls() - pollsBefore : false,
    );
    // One poll may have been in flight across the tick and the next one carries the change; polls
    // every 20 ms keep coming while a loaded machine delivers it, so "a few" is counted generously.
    // A stream frozen by the far-future time would never match at all.
    expect(pollsToRecover).toBeLessThanOrEqual(10);
    expect(client.view('book', market)!.ts.startsWith('2099')).toBe(false);
    await waitFor('the price stream too', () => !client.view('price', market)!.ts.startsWith('2099'));
    // Live: whatever a loaded machine's slow poll may have said meanwhile, the last word is not stale.
    await waitFor('both streams live', () =>
      ['book', 'price'].every(
        (channel) => client.of('status').findLast((s) => s.channel === channel)?.state !== 'stale',
      ),
    );
    expect(client.violations).toEqual([]);
  });
});
