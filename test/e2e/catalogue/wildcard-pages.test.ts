/**
 * Wildcard subscriptions over a catalogue of several pages, against every simulator profile (some
 * serve 20 or 25 markets a page): `markets: ["*"]` on `price`, `trades` and `market` joins every
 * active market, however many pages list them, and leaves a market listed past the first page when
 * it expires or resolves (protocol.md "Wildcard subscriptions").
 */
import { describe, expect, it } from 'vitest';
import type { MarketListRecord } from '../../../packages/protocol/src/protocol/messages.ts';
import { simulatorProfileNames } from '../../../src/sim/profile.ts';
import { announcedJoined, announcedLeft, settle, sorted } from '../../support/channels/wildcard.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { type Harness, useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

const CHANNELS = ['price', 'trades', 'market'] as const;

/** Upstream's active markets, newest first, every page of them. */
async function activeNewestFirst(harness: Harness): Promise<string[]> {
  const ids: string[] = [];
  for (let more = true; more; ) {
    const response = await fetch(
      `${harness.sim.url}/api/markets?statusFilter=active&sortBy=newest&limit=100&offset=${ids.length}`,
    );
    const body = (await response.json()) as { markets: MarketListRecord[]; pagination: { hasMore: boolean } };
    ids.push(...body.markets.map((record) => String(record.market_id)));
    more = body.pagination.hasMore && body.markets.length > 0;
  }
  return ids;
}

describe.each(simulatorProfileNames)(
  'wildcard subscriptions over several catalogue pages (%s profile)',
  (profile) => {
    const { opened, start } = useHarness(profile);

    it('joins every active market on price, trades and market; one listed past the first page leaves when it settles', async () => {
      // 24 markets: 22 active, more than a page of 20. Trades and market streams are polled at
      // the price interval: 500 ms keeps ~70 streams light on a busy machine.
      const harness = await start({
        sim: { markets: 24, tradeFlow: () => undefined },
        relay: { pricePollMs: 500 },
      });
      const raw = await ProtocolClient.connect(harness.relay.url);
      opened.push(raw);
      for (const channel of CHANNELS) await raw.request({ op: 'subscribe', channel, markets: ['*'] });
      const active = harness.sim.market.activeMarketIds();
      expect(active.length).toBeGreaterThan(21);
      await waitFor(
        'every active market joined on every channel',
        () => CHANNELS.every((channel) => announcedJoined(raw, channel).length >= active.length) || undefined,
      );
      for (const channel of CHANNELS) expect(sorted(announcedJoined(raw, channel))).toEqual(sorted(active));

      // Two markets the first 20 of the relay's pages (newest first) do not hold.
      const newest = await activeNewestFirst(harness);
      const [expiring, resolving] = active.filter((id) => newest.indexOf(id) >= 20) as [string, string];
      await settle(harness, expiring, 'EXPIRED');
      await settle(harness, resolving, 'RESOLVED');
      await waitFor(
        'both settled markets left on every channel',
        () => CHANNELS.every((channel) => announcedLeft(raw, channel).length >= 2) || undefined,
      );
      for (const channel of CHANNELS)
        expect(sorted(announcedLeft(raw, channel)), channel).toEqual(sorted([expiring, resolving]));
      // Nothing more of them reaches the client.
      for (const channel of CHANNELS)
        for (const market of [expiring, resolving]) {
          const stream = harness.relay.registry.get({ channel, market });
          expect(stream === undefined || stream.subscribers.size === 0, `${channel} ${market}`).toBe(true);
        }
      expect(raw.violations).toEqual([]);
    });
  },
);
