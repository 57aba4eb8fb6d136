/**
 * Wildcard subscriptions (protocol.md "Wildcard subscriptions"): `markets: ["*"]` on `price`,
 * `trades` or `market` follows upstream's active catalogue. A market the simulator adds is joined
 * and announced without a new subscribe; one that expires or resolves is left and announced; the
 * streams count against the connection's limit; `*` unsubscribes it all; SSE carries it too.
 */
import { describe, expect, it } from 'vitest';
import { COMPACT_SUBPROTOCOL } from '../../../packages/protocol/src/protocol/compact.ts';
import {
  addMarket,
  announcedJoined,
  announcedLeft,
  settle,
  sorted,
} from '../../support/channels/wildcard.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { SseClient } from '../../support/clients/sse-client.ts';
import { useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

describe('wildcard subscriptions', () => {
  const { opened, start } = useHarness();

  it('price "*": every active market, a new one without re-subscribing, a settled one left', async () => {
    const harness = await start({ sim: { markets: 4 } });
    const raw = await ProtocolClient.connect(harness.relay.url);
    opened.push(raw);
    const reply = await raw.request({ op: 'subscribe', channel: 'price', markets: ['*'] });
    expect(reply).toMatchObject({ type: 'subscribed', channel: 'price', markets: ['*'] });
    const active = harness.sim.market.activeMarketIds();
    await waitFor('every active market joined', () =>
      announcedJoined(raw, 'price').length === active.length ? true : undefined,
    );
    expect(sorted(announcedJoined(raw, 'price'))).toEqual(sorted(active));
    for (const market of active) await waitFor(`${market}'s price`, () => raw.view('price', market));

    const added = await addMarket(harness);
    await waitFor('the new market announced', () =>
      announcedJoined(raw, 'price').includes(added) ? true : undefined,
    );
    const snapshot = await waitFor("the new market's price", () => raw.view('price', added));
    expect(typeof Object.values(snapshot.state as Record<string, unknown>)[0]).toBe('string');

    const [expiring, resolving] = active;
    await settle(harness, expiring!, 'EXPIRED');
    await settle(harness, resolving!, 'RESOLVED');
    await waitFor('both settled markets left', () =>
      announcedLeft(raw, 'price').length === 2 ? true : undefined,
    );
    expect(sorted(announcedLeft(raw, 'price'))).toEqual(sorted([expiring!, resolving!]));
    // The relay no longer sends this client anything of them.
    const session = [...harness.relay.ws.connections][0]!.session;
    expect(session.streamCount).toBe(active.length + 1 - 2);
    const stream = harness.relay.registry.get({ channel: 'price', market: expiring! });
    expect(stream === undefined || stream.subscribers.size === 0).toBe(true);
    expect(raw.violations).toEqual([]);
  });

  it('trades and market "*" on one connection: a resolved market leaves both', async () => {
    const harness = await start({ sim: { markets: 3 } });
    const raw = await ProtocolClient.connect(harness.relay.url);
    opened.push(raw);
    await raw.request({ op: 'subscribe', channel: 'trades', markets: ['*'] });
    await raw.request({ op: 'subscribe', channel: 'market', markets: ['*'] });
    const active = harness.sim.market.activeMarketIds();
    for (const market of active) {
      await waitFor(`${market}'s record`, () => raw.view('market', market));
      await waitFor(`${market}'s trades`, () => raw.view('trades', market));
    }
    const resolving = active[0]!;
    await settle(harness, resolving, 'RESOLVED');
    await waitFor('left on both channels', () =>
      announcedLeft(raw, 'trades').includes(resolving) && announcedLeft(raw, 'market').includes(resolving)
        ? true
        : undefined,
    );
    // The catalogue stream behind both is one subscription, shared.
    expect(harness.relay.registry.ids('markets').size).toBe(1);
    expect(raw.violations).toEqual([]);
  });

  it('counts against the connection limit: markets beyond it are refused once, joined when room appears', async () => {
    const harness = await start({
      sim: { markets: 5 },
      relay: { tuning: { connection: { maxStreams: 3 } } },
    });
    const raw = await ProtocolClient.connect(harness.relay.url);
    opened.push(raw);
    await raw.request({ op: 'subscribe', channel: 'price', markets: ['*'] });
    await waitFor('two refusals', () => (raw.of('error').length === 2 ? true : undefined));
    for (const error of raw.of('error'))
      expect(error).toMatchObject({ code: 'limit_exceeded', channel: 'price' });
    const joined = announcedJoined(raw, 'price');
    expect(joined).toHaveLength(3);
    const waiting = raw.of('error').map((error) => error.market as string);

    await settle(harness, joined[0]!, 'EXPIRED');
    await waitFor('a waiting market joined in its place', () =>
      announcedJoined(raw, 'price').length === 4 ? true : undefined,
    );
    expect(waiting).toContain(announcedJoined(raw, 'price')[3]);
    expect(raw.of('error')).toHaveLength(2);
    expect([...harness.relay.ws.connections][0]!.session.streamCount).toBe(3);
  });

  it('"*" unsubscribes everything it joined; a market named before stays; "*" is refused where it does not apply', async () => {
    const harness = await start({ sim: { markets: 3 } });
    const raw = await ProtocolClient.connect(harness.relay.url);
    opened.push(raw);
    const active = harness.sim.market.activeMarketIds();
    const named = active[0]!;
    await raw.request({ op: 'subscribe', channel: 'price', markets: [named] });
    await raw.request({ op: 'subscribe', channel: 'price', markets: ['*'] });
    // The market held by name is the client's own: the wildcard neither announces nor leaves it.
    await waitFor('joined', () =>
      announcedJoined(raw, 'price').length === active.length - 1 ? true : undefined,
    );
    expect(announcedJoined(raw, 'price')).not.toContain(named);
    const reply = await raw.request({ op: 'unsubscribe', channel: 'price', markets: ['*'] });
    expect(reply).toMatchObject({ type: 'unsubscribed', channel: 'price', markets: ['*'] });
    const session = [...harness.relay.ws.connections][0]!.session;
    expect(session.streamCount).toBe(1);
    // No longer followed: a new market is not joined.
    const added = await addMarket(harness);
    const probe = await ProtocolClient.connect(harness.relay.url);
    opened.push(probe);
    await probe.request({ op: 'subscribe', channel: 'markets', markets: ['active'] });
    await waitFor(
      'the catalogue lists it',
      () => (probe.view('markets', 'active')?.state as Record<string, unknown> | undefined)?.[added],
    );
    await raw.request({ op: 'ping' });
    expect(announcedJoined(raw, 'price')).not.toContain(added);

    for (const [channel, markets] of [
      ['book', ['*']],
      ['probabilities', ['*']],
      ['price', ['*', named]],
    ] as const) {
      const refusal = await raw.request({ op: 'subscribe', channel, markets });
      expect(refusal).toMatchObject({ type: 'error', code: 'bad_request' });
    }
  });

  it('naming a wildcard market resyncs it and it stays the wildcard market; unsubscribing one by name keeps it out; "*" again resyncs them all', async () => {
    const harness = await start({ sim: { markets: 3 } });
    const raw = await ProtocolClient.connect(harness.relay.url);
    opened.push(raw);
    await raw.request({ op: 'subscribe', channel: 'price', markets: ['*'] });
    const [resynced, dropped, kept] = harness.sim.market.activeMarketIds();
    await waitFor('joined', () => (announcedJoined(raw, 'price').length === 3 ? true : undefined));
    await waitFor('the snapshots', () => (raw.view('price', kept!) ? true : undefined));

    const snapshots = () => raw.of('snapshot').filter((m) => m.market === resynced).length;
    const before = snapshots();
    await raw.request({ op: 'subscribe', channel: 'price', markets: [resynced] });
    await waitFor('the resync snapshot', () => (snapshots() > before ? true : undefined));
    await raw.request({ op: 'unsubscribe', channel: 'price', markets: [dropped] });

    const from = raw.messages.length;
    await raw.request({ op: 'subscribe', channel: 'price', markets: ['*'] });
    const again = await waitFor('the repeated announcement', () =>
      raw.messages.slice(from).find((m) => m.type === 'subscribed' && m.wildcard === true),
    );
    expect(sorted(again.markets as string[])).toEqual(sorted([resynced!, kept!]));

    await settle(harness, resynced!, 'EXPIRED');
    await waitFor('the resynced market left with the wildcard', () =>
      announcedLeft(raw, 'price').includes(resynced!) ? true : undefined,
    );
    expect([...harness.relay.ws.connections][0]!.session.streamCount).toBe(1);
    expect(raw.violations).toEqual([]);
  });

  it('over SSE, and on a compact connection the announcements name the stream numbers', async () => {
    const harness = await start({ sim: { markets: 2 } });
    const sse = await SseClient.connect(`${harness.relay.url}/v1/sse?channel=price&markets=*`);
    opened.push(sse);
    expect(sse.status).toBe(200);
    const compact = await ProtocolClient.connect(harness.relay.url, {}, [COMPACT_SUBPROTOCOL]);
    opened.push(compact);
    await compact.request({ op: 'subscribe', channel: 'price', markets: ['*'] });
    const active = harness.sim.market.activeMarketIds();
    const added = await addMarket(harness);
    for (const client of [sse, compact]) {
      for (const market of [...active, added])
        await waitFor(`${market}'s price`, () => client.view('price', market));
      expect(client.violations).toEqual([]);
    }
    expect(compact.compactMessages).toBeGreaterThan(0);
    expect(sorted(announcedJoined(sse, 'price'))).toEqual(sorted([...active, added]));
  });
});
