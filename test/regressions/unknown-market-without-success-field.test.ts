/**
 * Issue 23: the relay reported `unknown_market` only when a 404's body was the simulator's own
 * `{"success":false,"error":...}`; against an upstream answering `404 {"error":"market not found"}`
 * a market that does not exist stayed `stale` ("upstream misconfigured"), polled for ever, and
 * `GET /v1/book/<id>` answered 503. Run against every simulator profile (the `terse` one's error
 * bodies have no `success`, its `/api` refuses unknown ids with 400, its price batch answers them
 * with a bare entry), the relay must judge only from what upstream's interface defines.
 */
import { describe, expect, it } from 'vitest';
import type { SimRequestLogEntry } from '../../src/sim/admin.ts';
import { simulatorProfileNames } from '../../src/sim/profile.ts';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { type Harness, startHarness, startHarnessRelay, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

const NOWHERE = '00000000-0000-4000-8000-000000000000';
const CHANNELS = ['book', 'price', 'trades', 'market'] as const;

/** Whether a simulator request named `market` (path, query or batch body). */
function names(request: SimRequestLogEntry, market: string): boolean {
  if (request.path.includes(market) || request.query.market_id === market) return true;
  const ids = (request.body as { market_ids?: unknown } | undefined)?.market_ids;
  return Array.isArray(ids) && ids.includes(market);
}

describe.each(simulatorProfileNames)('a market upstream does not have (%s profile)', (profile) => {
  const { opened, start } = useHarness(profile);

  async function connect(harness: Harness): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(harness.relay.url);
    opened.push(client);
    return client;
  }

  it('is unknown_market on every channel and 404 on /v1/book, and is no longer polled', async () => {
    const harness = await start({ sim: { markets: 4 } });
    const [real] = harness.sim.market.activeMarketIds() as [string];
    const client = await connect(harness);
    await waitFor('the first catalogue load', () => harness.relay.knownMarkets.size > 0 || undefined);
    await client.request({ op: 'subscribe', channel: 'book', markets: [real] });
    for (const channel of CHANNELS) await client.request({ op: 'subscribe', channel, markets: [NOWHERE] });
    // A bare price entry (terse) tells nothing until a catalogue load begun after the stream did
    // (an older list may predate a new market): the relay's next scheduled one, brought forward.
    await harness.relay.knownMarkets.refresh();

    for (const channel of CHANNELS) {
      await waitFor(`unknown_market on ${channel}`, () =>
        client.of('error').find((error) => error.code === 'unknown_market' && error.channel === channel),
      );
    }
    const book = await fetch(`${harness.relay.url}/v1/book/${NOWHERE}`);
    expect(book.status).toBe(404);
    expect(await book.json()).toMatchObject({ error: 'unknown_market' });

    // Polling stopped: while the real market is polled ten more times, nothing asks for the other.
    const countOf = (market: string) =>
      harness.sim.requests.filter((request) => names(request, market)).length;
    const before = countOf(NOWHERE);
    const realBefore = countOf(real);
    await waitFor('ten more polls of the real market', () => countOf(real) >= realBefore + 10);
    expect(countOf(NOWHERE)).toBe(before);
    expect((await fetch(`${harness.relay.url}/health`)).status).toBe(200);
  });

  it('closes the streams of a market removed upstream after the catalogue listed it', async () => {
    const harness = await start({ sim: { markets: 4 } });
    const [, gone] = harness.sim.market.activeMarketIds() as [string, string];
    const client = await connect(harness);
    for (const channel of CHANNELS) await client.request({ op: 'subscribe', channel, markets: [gone] });
    for (const channel of CHANNELS) {
      await waitFor(`the ${channel} snapshot`, () => client.view(channel, gone)?.state !== undefined);
    }
    harness.sim.market.removeMarket(gone);
    const closed = (channel: string) =>
      client
        .of('status')
        .find((status) => status.channel === channel && status.market === gone && status.state === 'closed');
    // The catalogue still lists it: the paths that answered for it before now refuse it.
    for (const channel of ['book', 'trades', 'market']) {
      await waitFor(`the ${channel} stream closed`, () => closed(channel));
    }
    // The price batch leaves it out (default) or answers it bare like a market without prices
    // (terse): then the catalogue's next reload, which no longer lists it, ends the stream.
    await harness.relay.knownMarkets.refresh();
    await waitFor('the price stream closed', () => closed('price'));
    expect(client.of('error')).toEqual([]);
  });

  it('still reports a wrong base path as upstream misconfigured, never unknown_market', async () => {
    const harness = await start({ sim: { markets: 4 } });
    const wrong = await startHarnessRelay(harness.sim, { upstream: `${harness.sim.url}/v2` });
    opened.push(wrong);
    const [real] = harness.sim.market.activeMarketIds() as [string];
    const client = await ProtocolClient.connect(wrong.url);
    opened.push(client);
    await client.request({ op: 'subscribe', channel: 'book', markets: [real, NOWHERE] });
    const health = await waitFor('/health 503', async () => {
      const response = await fetch(`${wrong.url}/health`);
      return response.status === 503 ? ((await response.json()) as Record<string, unknown>) : undefined;
    });
    expect(health).toMatchObject({ status: 'upstream_misconfigured' });
    await waitFor('both streams reported unavailable', () => client.of('error').length >= 2);
    expect(client.of('error').every((error) => error.code === 'upstream_unavailable')).toBe(true);
    expect(client.of('status').every((status) => status.reason === 'upstream misconfigured')).toBe(true);
  });
});

// The harness's own profile switch is what the suites above rely on.
it('starts the simulator with the profile asked for', async () => {
  const harness = await startHarness({ sim: { markets: 1, profile: 'terse' } });
  try {
    expect(harness.sim.profile).toBe('terse');
    const answer = await fetch(`${harness.sim.url}/clob/orderbook?market_id=${NOWHERE}`);
    expect(answer.status).toBe(404);
    expect(await answer.json()).toEqual({ error: `market ${NOWHERE} not found` });
  } finally {
    await harness.stop();
  }
});
