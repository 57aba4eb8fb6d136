/**
 * Cluster mode, `candles`: two relays on one Redis and one upstream. Only the lease holder reads
 * the activity pages; the other publishes the candles it shares, so clients of both relays see the
 * same candles, every print counted once, also after the holder left and the other carries on from
 * the series it was shared (whichever order upstream lists its activity in).
 */
import { describe, expect, it } from 'vitest';
import { candlesStreamId } from '../../../packages/protocol/src/channels/candles/streams.ts';
import type { CandlesData } from '../../../packages/protocol/src/protocol/messages.ts';
import { streamTargetKey } from '../../../src/relay/coordination/redis/keys.ts';
import { simulatorProfileNames } from '../../../src/sim/profile.ts';
import { candlesSince, hourlyCountsMatch, hourStart } from '../../support/channels/hourly-prints.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { useRelayPair } from '../../support/cluster/relay-pair.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.skipIf(!redisAvailable()).each(simulatorProfileNames)(
  'cluster mode over Redis: candles (%s profile)',
  (profile) => {
    const { start, relays, clients, leasesSettled } = useRelayPair();

    it('one relay reads the activity; clients of both get the same candles, each print once, across a handover', async () => {
      const { sim, relays: pair } = await start(profile);
      const market = sim.market.activeMarketIds()[0]!;
      const id = candlesStreamId({ market, interval: '1h', source: 'trades' });
      const polls = pair.map((of) => {
        const count = { ok: 0 };
        of.events.on('poll:done', ({ kind, outcome }) => {
          if (kind === 'candles' && outcome === 'ok') count.ok += 1;
        });
        return count;
      });
      const viewers: ProtocolClient[] = [];
      for (const relay of pair) {
        const viewer = await ProtocolClient.connect(relay.url);
        clients.push(viewer);
        viewers.push(viewer);
        await viewer.request({ op: 'subscribe', channel: 'candles', markets: [id] });
      }
      await waitFor('snapshots on both relays', () => viewers.every((viewer) => viewer.view('candles', id)));
      await leasesSettled(pair, [streamTargetKey('candles', id)]);
      for (const count of polls) count.ok = 0;

      const since = hourStart(Date.now());
      const prints = () => sim.market.market(market)!.trades;
      const state = (viewer: ProtocolClient) => viewer.view('candles', id)!.state as CandlesData;
      for (const burst of [120, 30]) {
        sim.market.printTrades(market, burst);
        for (const viewer of viewers)
          await waitFor(`${prints().length} prints on both relays`, () =>
            hourlyCountsMatch(state(viewer), prints(), since),
          );
      }
      expect(candlesSince(state(viewers[1]!), since)).toEqual(candlesSince(state(viewers[0]!), since));
      for (const viewer of viewers) expect([...viewer.violations, ...viewer.of('error')]).toEqual([]);
      // One relay read upstream; the other applied what it shared.
      expect(Math.min(...polls.map((count) => count.ok))).toBe(0);
      expect(Math.max(...polls.map((count) => count.ok))).toBeGreaterThanOrEqual(2);

      // The holder leaves: the other relay takes the lease over and counts on from the shared series.
      const holder = polls.findIndex((count) => count.ok > 0);
      const survivor = 1 - holder;
      await pair[holder]!.close();
      relays.splice(relays.indexOf(pair[holder]!), 1);
      polls[survivor]!.ok = 0;
      await waitFor('the survivor polling', () => polls[survivor]!.ok > 0);
      for (const burst of [40, 110]) {
        sim.market.printTrades(market, burst);
        await waitFor(`${prints().length} prints after the handover`, () =>
          hourlyCountsMatch(state(viewers[survivor]!), prints(), since),
        );
      }
      expect(viewers[survivor]!.violations).toEqual([]);
    });
  },
);
