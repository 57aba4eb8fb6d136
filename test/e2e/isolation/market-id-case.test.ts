/**
 * One market, one spelling: clients may send a market id in any case; the relay answers, streams
 * and polls it in lower case, with one stream (one seq, one upstream poll) per market.
 */
import { describe, expect, it } from 'vitest';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

/** Every mix of upper and lower case over the letters of a UUID, a few of them. */
function spellings(id: string, count: number): string[] {
  const variants = new Set<string>();
  for (let seed = 1; variants.size < count; seed++) {
    variants.add(
      [...id].map((char, i) => (((seed >> (i % 20)) & 1) === 1 ? char.toUpperCase() : char)).join(''),
    );
  }
  return [...variants];
}

describe('market ids in any case', () => {
  const { opened: clients, start } = useHarness();

  it('are one lower-case stream and one upstream poll per market', async () => {
    const harness = await start({ sim: { markets: 2 } });
    const market = harness.sim.market.marketIds()[0]!;
    const [upper, mixed, other] = spellings(market, 3) as [string, string, string];
    const a = await ProtocolClient.connect(harness.relay.url);
    const b = await ProtocolClient.connect(harness.relay.url);
    clients.push(a, b);

    const reply = await a.request({ op: 'subscribe', channel: 'book', markets: [upper, mixed] });
    expect(reply).toMatchObject({ type: 'subscribed', markets: [market] });
    await b.request({ op: 'subscribe', channel: 'book', markets: [other.toUpperCase()] });
    await b.request({ op: 'subscribe', channel: 'price', markets: [other] });
    await waitFor('both snapshots', () => a.view('book', market) && b.view('book', market));

    expect(harness.relay.registry.size).toBe(2); // one book stream, one price stream
    expect(a.view('book', market)!.epoch).toBe(b.view('book', market)!.epoch);
    for (const message of [...a.messages, ...b.messages]) {
      if (typeof message.market === 'string') expect(message.market).toBe(market);
    }
    const polled = harness.sim.requests
      .filter((request) => request.path === '/clob/orderbook')
      .map((request) => request.query.market_id);
    expect(new Set(polled)).toEqual(new Set([market]));

    // Unsubscribing in yet another spelling ends this client's subscription.
    const gone = await a.request({ op: 'unsubscribe', channel: 'book', markets: [market.toUpperCase()] });
    expect(gone).toMatchObject({ type: 'unsubscribed', markets: [market] });
    const stream = harness.relay.registry.get({ channel: 'book', market, depth: null });
    expect(stream?.subscribers.size).toBe(1);
  });

  it('resumes from a resume point keyed in another case', async () => {
    const harness = await start({ sim: { markets: 1 } });
    const market = harness.sim.market.marketIds()[0]!;
    const a = await ProtocolClient.connect(harness.relay.url);
    clients.push(a);
    await a.request({ op: 'subscribe', channel: 'book', markets: [market] });
    const { epoch, seq } = await waitFor('a snapshot', () => a.view('book', market));
    const reply = await a.request({
      op: 'subscribe',
      channel: 'book',
      markets: [market.toUpperCase()],
      resume: { [market.toUpperCase()]: { epoch, seq } },
    });
    expect(reply).toMatchObject({ markets: [market], recovered: { [market]: true } });
  });
});
