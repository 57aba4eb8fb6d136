/**
 * End to end: one upstream request per interval serves every subscriber of the `probabilities`
 * stream, under every simulator profile (its own file to keep each under ten seconds).
 */
import { describe, expect, it } from 'vitest';
import type { Channel } from '../../../packages/protocol/src/protocol/messages.ts';
import type { SimulatorProfileName } from '../../../src/sim/profile.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

/** The suite under each of `profiles` (a part of the matrix: test/support/profile-matrix.ts). */
export function probabilitiesFanoutSuite(profiles: readonly SimulatorProfileName[]): void {
  describe.each(profiles)('probabilities fan-out (%s profile)', (profile) => {
    const fixture = useHarness(profile);

    async function connect(url: string): Promise<ProtocolClient> {
      const client = await ProtocolClient.connect(url);
      fixture.opened.push(client);
      return client;
    }

    it('asks upstream for the probabilities map once per interval for 100 subscribers', async () => {
      const pricePollMs = 100;
      const harness = await fixture.start({ sim: { markets: 8, tickMs: 20 }, relay: { pricePollMs } });
      const { sim, relay } = harness;
      const clients: ProtocolClient[] = [];
      for (let i = 0; i < 100; i++) clients.push(await connect(relay.url));
      await Promise.all(
        clients.map((client) =>
          client.request({ op: 'subscribe', channel: 'probabilities', markets: ['all'] }),
        ),
      );
      await waitFor('every snapshot', () => clients.every((client) => client.view('probabilities', 'all')));

      let polls = 0;
      const onPoll = ({ kind }: { kind: Channel }) => {
        if (kind === 'probabilities') polls += 1;
      };
      relay.events.on('poll:done', onPoll);
      sim.clearRequests();
      const window = 12;
      await waitFor(`${window} polls`, () => polls >= window, { timeoutMs: 20_000 });
      relay.events.off('poll:done', onPoll);
      const asked = sim.requests.filter((request) => request.path === '/api/markets/probabilities');
      // One request per poll (a poll in flight at either end of the window may fall on one side only).
      expect(Math.abs(asked.length - polls)).toBeLessThanOrEqual(1);
      // ... and no more often than the interval: one request serves all 100 subscribers. Counted
      // over the window, since upstream's arrival times carry the machine's jitter, not the schedule.
      const span = asked.at(-1)!.at - asked[0]!.at;
      expect(asked.length - 1).toBeLessThanOrEqual(span / pricePollMs + 1);

      // Every subscriber holds the same state at the same seq.
      const [first] = clients;
      await waitFor('every client at the same seq', () =>
        clients.every(
          (client) => client.view('probabilities', 'all')!.seq === first!.view('probabilities', 'all')!.seq,
        ),
      );
      for (const client of clients) {
        expect(client.view('probabilities', 'all')!.state).toEqual(
          first!.view('probabilities', 'all')!.state,
        );
        expect(client.violations).toEqual([]);
      }
    });
  });
}
