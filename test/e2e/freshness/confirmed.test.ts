/**
 * Per-stream freshness (protocol.md "Freshness of a quiet stream"): a stream whose data does not
 * change still tells its subscribers, with `confirmed` messages, that upstream confirmed it; the
 * time stops advancing when upstream fails and the stream turns `stale`.
 */
import { describe, expect, it } from 'vitest';
import { connectRecorded } from '../../client/sdk-support.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { type Harness, useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

const CONFIRM_MS = 50;

describe('confirmed', () => {
  let harness: Harness;
  const { opened, start } = useHarness();

  it("advances a quiet stream's confirmation time, freezes it while upstream fails", async () => {
    harness = await start({
      sim: { markets: 2 },
      relay: { tuning: { confirmMs: CONFIRM_MS, upstreamRetries: 0 } },
    });
    const market = harness.sim.market.marketIds()[0]!;
    const raw = await ProtocolClient.connect(harness.relay.url);
    opened.push(raw);
    await raw.request({ op: 'subscribe', channel: 'book', markets: [market], depth: 10 });
    const { client } = connectRecorded(harness.relay.url);
    opened.push({ close: async () => client.close() });
    const book = client.subscribeBook(market, { depth: 10 });
    const price = client.subscribePrice(market);
    const bookConfirmations: string[] = [];
    const priceConfirmations: string[] = [];
    book.on('confirmed', ({ confirmedAt }) => bookConfirmations.push(confirmedAt));
    price.on('confirmed', ({ confirmedAt }) => priceConfirmations.push(confirmedAt));

    // The simulator does not tick: the data never changes, the confirmation time does.
    await waitFor('three confirmations of each', () =>
      bookConfirmations.length >= 3 && priceConfirmations.length >= 3 ? true : undefined,
    );
    expect(book.seq).toBe(1);
    expect(price.seq).toBe(1);
    expect([...bookConfirmations].sort()).toEqual(bookConfirmations);
    expect(new Set(bookConfirmations).size).toBe(bookConfirmations.length);
    expect(book.confirmedAt).toBe(bookConfirmations.at(-1));
    const snapshot = raw.of('snapshot')[0]!;
    const wire = raw.of('confirmed');
    expect(wire.length).toBeGreaterThan(0);
    for (const message of wire) {
      expect(message).toMatchObject({ channel: 'book', market, depth: 10, epoch: snapshot.epoch, seq: 1 });
      expect(String(message.confirmed) > String(snapshot.rts)).toBe(true);
    }

    harness.sim.setFaults({ errorRate: 1 });
    await waitFor('the book stale', () => (book.status === 'stale' ? true : undefined));
    const frozen = book.confirmedAt;
    const heard = raw.of('confirmed').length;
    const staleAt = Date.now();
    await waitFor('failed polls over several confirmation periods', () =>
      harness.sim.requests.some(
        (r) => r.path === '/clob/orderbook' && r.status === 500 && r.at > staleAt + 4 * CONFIRM_MS,
      )
        ? true
        : undefined,
    );
    expect(book.confirmedAt).toBe(frozen);
    expect(raw.of('confirmed').length).toBe(heard);
    expect(raw.of('status').at(-1)).toMatchObject({ state: 'stale' });

    harness.sim.setFaults({ errorRate: 0 });
    await waitFor('confirmed again', () =>
      book.status === 'live' && book.confirmedAt! > frozen! ? true : undefined,
    );
    expect(book.seq).toBe(1);
  });

  it('comes over Server-Sent Events too', async () => {
    harness = await start({ sim: { markets: 2 }, relay: { tuning: { confirmMs: CONFIRM_MS } } });
    const market = harness.sim.market.marketIds()[1]!;
    const { client } = connectRecorded(harness.relay.url, { transport: 'sse' });
    opened.push({ close: async () => client.close() });
    const price = client.subscribePrice(market);
    const heard: string[] = [];
    price.on('confirmed', ({ confirmedAt }) => heard.push(confirmedAt));
    await waitFor('two confirmations', () => (heard.length >= 2 ? true : undefined));
    expect(price.seq).toBe(1);
    expect(price.confirmedAt).toBe(heard.at(-1));
  });
});
