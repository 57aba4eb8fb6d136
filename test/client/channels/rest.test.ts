/**
 * The SDK's `rest` streams (docs/client.md "Any public path"): `subscribeRest` keeps upstream's body
 * as a plain object by applying the relay's patches, over WebSocket (compact encoding) and SSE,
 * checked against each checksum; equivalent spellings are one subscription; a path that is not
 * public throws before anything is sent.
 */
import { describe, expect, it } from 'vitest';
import type { ResyncReason } from '../../../packages/client/src/index.ts';
import { useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';
import { connectRecorded } from '../sdk-support.ts';

describe('subscribeRest', () => {
  const { opened, start } = useHarness();

  for (const transport of ['websocket', 'sse'] as const) {
    it(`keeps bodies equal to upstream's over ticks (${transport})`, async () => {
      const harness = await start({ sim: { markets: 3 } });
      const { client, errors } = connectRecorded(harness.relay.url, transport === 'sse' ? { transport } : {});
      opened.push({ close: () => client.close() });
      const [market] = harness.sim.market.activeMarketIds();
      const holders = client.subscribeRest(`/api/markets/${market!.toUpperCase()}/holders?limit=20&type=yes`);
      expect(holders.path).toBe(`/api/markets/${market}/holders?type=YES`);
      expect(client.subscribeRest(`/api/markets/${market}/holders?type=YES`)).toBe(holders);
      const leaderboard = client.subscribeRest('/api/rewards/leaderboard?limit=25');
      const streams = [holders, leaderboard];
      const resyncs: ResyncReason[] = [];
      let updates = 0;
      for (const stream of streams) {
        stream.on('resync', ({ reason }) => resyncs.push(reason));
        stream.on('update', () => {
          updates += 1;
        });
      }
      await waitFor(`first states ${JSON.stringify(errors.map((e) => e.message))}`, () =>
        streams.every((s) => s.state !== undefined) ? true : undefined,
      );
      const user = (holders.state as { holders: Array<{ username: string }> }).holders[0]!.username;
      const positions = client.subscribeRest(`/api/users/${user}/positions?include_closed=true`);
      streams.push(positions);
      positions.on('update', () => {
        updates += 1;
      });
      for (let round = 0; round < 4; round++) {
        for (let i = 0; i < 5; i++) harness.sim.tick();
        const served = await Promise.all(
          streams.map(async (s) => JSON.stringify(await (await fetch(`${harness.sim.url}${s.path}`)).json())),
        );
        await waitFor(
          `round ${round} ${JSON.stringify(resyncs)} ${JSON.stringify(errors.map((e) => e.message))}`,
          () => (streams.every((s, i) => JSON.stringify(s.state) === served[i]) ? true : undefined),
        );
      }
      expect(updates).toBeGreaterThan(0);
      expect(resyncs).toEqual([]);
      expect(errors).toEqual([]);
      expect(() => client.subscribeRest('/api/user/positions')).toThrow(TypeError);
    });
  }
});
