/**
 * End to end, per channel after `book` and `price`: simulator + relay + real WebSocket clients.
 * The state each client rebuilds from snapshot + updates must equal what upstream answers at the
 * same moment (the simulator moves only on the test's ticks, so "the same moment" is between two
 * ticks); a market that leaves ACTIVE says so in an update, then its stream is `closed`; and the
 * probabilities map costs one upstream request per interval however many clients subscribe.
 */
import { describe, expect, it } from 'vitest';
import type {
  Channel,
  OracleData,
  ProbabilitiesData,
} from '../../../packages/protocol/src/protocol/messages.ts';
import type { RelayEvents } from '../../../src/relay/events.ts';
import { type SimulatorProfileName, simulatorProfiles } from '../../../src/sim/profile.ts';
import type { SimulatorHandle } from '../../../src/sim/server.ts';
import { marketResponse, probabilitiesResponse, tokenPriceResponse } from '../../../src/upstream/schemas.ts';
import type { MessageRecorder } from '../../support/clients/message-recorder.ts';
import { type Message, ProtocolClient } from '../../support/clients/protocol-client.ts';
import { SseClient } from '../../support/clients/sse-client.ts';
import { useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

const ROUNDS = 8;

/** A simulator clock the test moves: a second per round, so oracle publish times advance. */
function testClock(): { now: () => number; advance: (ms: number) => void } {
  let time = Date.now();
  return {
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
  };
}

async function upstreamJson(sim: SimulatorHandle, path: string): Promise<unknown> {
  return (await fetch(`${sim.url}${path}`)).json();
}

/** The record as upstream served it, its fields in upstream's order (the relay passes it on so). */
async function upstreamMarket(sim: SimulatorHandle, market: string) {
  const body = await upstreamJson(sim, `/api/markets/${market}`);
  marketResponse.parse(body);
  return (body as { market: unknown }).market;
}

async function upstreamProbabilities(sim: SimulatorHandle): Promise<ProbabilitiesData> {
  return probabilitiesResponse.parse(await upstreamJson(sim, '/api/markets/probabilities')).probabilities;
}

async function upstreamOracle(sim: SimulatorHandle, feed: string): Promise<OracleData> {
  const { feed_id, price, raw_price, expo, publish_time } = tokenPriceResponse.parse(
    await upstreamJson(sim, `/api/tokens/price/${feed}`),
  );
  return { feed_id, price, raw_price, expo, publish_time };
}

/** Waits until the client's rebuilt state of the stream equals `expected`. */
async function expectState(client: MessageRecorder, channel: Channel, id: string, expected: unknown) {
  await waitFor(`${channel}:${id} equal to upstream`, () => {
    const state = client.view(channel, id)?.state;
    return JSON.stringify(state) === JSON.stringify(expected) || undefined;
  }).catch((error: unknown) => {
    expect(client.view(channel, id)?.state).toEqual(expected);
    throw error;
  });
}

function streamMessages(client: ProtocolClient, channel: Channel, id: string): Message[] {
  return client.messages.filter((message) => message.channel === channel && message.market === id);
}

/** The suite under each of `profiles` (a part of the matrix: test/support/profile-matrix.ts). */
export function channelsSuite(profiles: readonly SimulatorProfileName[]): void {
  describe.each(profiles)(
    'relay end to end: market, probabilities and oracle channels (%s profile)',
    (profile) => {
      const fixture = useHarness(profile);

      async function connect(url: string): Promise<ProtocolClient> {
        const client = await ProtocolClient.connect(url);
        fixture.opened.push(client);
        return client;
      }

      it('keeps each client equal to upstream: market records, the probabilities map, oracle feeds', async () => {
        const clock = testClock();
        // Polls every 100 ms: a first answer slower than 20 ms polls' 60 ms grace on a loaded machine
        // would be (rightly) reported as upstream_unavailable.
        const harness = await fixture.start({
          sim: { markets: 8, now: clock.now },
          relay: { pricePollMs: 100 },
        });
        const { sim } = harness;
        const [m0, m1] = sim.market.activeMarketIds() as [string, string];
        const feeds = sim.market.tokens.slice(0, 2).map((token) => token.oracleFeedId);
        const client = await connect(harness.relay.url);

        expect(
          await client.request({ op: 'subscribe', channel: 'market', markets: [m0, m1.toUpperCase()] }),
        ).toMatchObject({
          type: 'subscribed',
          markets: [m0, m1],
        });
        expect(
          await client.request({ op: 'subscribe', channel: 'probabilities', markets: ['all'] }),
        ).toMatchObject({
          type: 'subscribed',
          markets: ['all'],
        });
        // Feed ids are case-insensitive after the 0x.
        const shouted = feeds.map((feed) => `0x${feed.slice(2).toUpperCase()}`);
        expect(await client.request({ op: 'subscribe', channel: 'oracle', markets: shouted })).toMatchObject({
          type: 'subscribed',
          markets: feeds,
        });

        for (let round = 0; round < ROUNDS; round++) {
          if (round > 0) {
            clock.advance(1_000);
            sim.tick();
          }
          for (const market of [m0, m1])
            await expectState(client, 'market', market, await upstreamMarket(sim, market));
          await expectState(client, 'probabilities', 'all', await upstreamProbabilities(sim));
          for (const feed of feeds)
            await expectState(client, 'oracle', feed, await upstreamOracle(sim, feed));
        }
        // A market gone from upstream's map is a `null` in the update, and gone from the client's.
        sim.market.removeMarket(m1);
        await expectState(client, 'probabilities', 'all', await upstreamProbabilities(sim));
        expect(Object.keys(client.view('probabilities', 'all')?.state as ProbabilitiesData)).not.toContain(
          m1,
        );

        expect(client.violations).toEqual([]);
        expect(client.of('error')).toEqual([]);
        // The record as received: fields beyond the documented detail form too, when upstream sends them.
        const record = client.view('market', m0)!.state as Record<string, unknown>;
        expect('taker_fee_bps' in record).toBe(simulatorProfiles[profile].detailExtraFields);
        // Every round moved the books and the oracle prices: the streams carried updates, not only snapshots.
        expect(client.view('market', m0)!.updates).toBeGreaterThan(0);
        expect(client.view('probabilities', 'all')!.updates).toBeGreaterThanOrEqual(ROUNDS - 1);
        for (const feed of feeds)
          expect(client.view('oracle', feed)!.updates).toBeGreaterThanOrEqual(ROUNDS - 1);
      });

      it('serves the new channels over SSE too, with the same id checks', async () => {
        const clock = testClock();
        const harness = await fixture.start({
          sim: { markets: 4, now: clock.now },
          relay: { pricePollMs: 100 },
        });
        const { sim, relay } = harness;
        const feed = sim.market.tokens[0]!.oracleFeedId;
        const probabilities = await SseClient.connect(
          `${relay.url}/v1/sse?channel=probabilities&markets=all`,
        );
        const oracle = await SseClient.connect(
          `${relay.url}/v1/sse?channel=oracle&markets=${feed.toUpperCase().replace('0X', '0x')}`,
        );
        fixture.opened.push(probabilities, oracle);
        for (let round = 0; round < 3; round++) {
          if (round > 0) {
            clock.advance(1_000);
            sim.tick();
          }
          await expectState(probabilities, 'probabilities', 'all', await upstreamProbabilities(sim));
          await expectState(oracle, 'oracle', feed, await upstreamOracle(sim, feed));
        }
        expect([...probabilities.violations, ...oracle.violations]).toEqual([]);
        const refused = await fetch(
          `${relay.url}/v1/sse?channel=probabilities&markets=${sim.market.marketIds()[0]}`,
        );
        expect(refused.status).toBe(400);
        expect(await refused.json()).toMatchObject({ error: 'bad_request' });
      });

      it('resumes an oracle stream after a reconnect, the feed id in any case', async () => {
        const clock = testClock();
        const harness = await fixture.start({
          sim: { markets: 2, now: clock.now },
          relay: { pricePollMs: 100 },
        });
        const { sim, relay } = harness;
        const feed = sim.market.tokens[0]!.oracleFeedId;
        const stream = () => relay.registry.get({ channel: 'oracle', market: feed });
        const publishTick = async () => {
          const seq = stream()!.seq;
          clock.advance(1_000);
          sim.tick();
          await waitFor('the relay to publish the tick', () => stream()!.seq > seq);
        };
        const first = await connect(relay.url);
        await first.request({ op: 'subscribe', channel: 'oracle', markets: [feed] });
        await waitFor('the oracle snapshot', () => first.view('oracle', feed));
        await publishTick();
        await waitFor('one update', () => first.view('oracle', feed)!.updates === 1);
        const { epoch, seq } = first.view('oracle', feed)!;
        await first.close();
        await publishTick(); // missed while away; the stream lingers and is still polled
        await publishTick();

        const second = await connect(relay.url);
        const shouted = `0x${feed.slice(2).toUpperCase()}`;
        const reply = await second.request({
          op: 'subscribe',
          channel: 'oracle',
          markets: [shouted],
          resume: { [shouted]: { epoch, seq } },
        });
        expect(reply).toMatchObject({ type: 'subscribed', markets: [feed], recovered: { [feed]: true } });
        await waitFor('two replayed updates', () => second.of('update').length === 2 || undefined);
        expect(second.of('update').map((message) => [message.epoch, message.seq])).toEqual([
          [epoch, seq + 1],
          [epoch, seq + 2],
        ]);
        expect(second.of('snapshot')).toEqual([]);
        expect(second.of('update').at(-1)!.data).toEqual(await upstreamOracle(sim, feed));
      });

      it('sends an oracle update only when the publish time advances', async () => {
        const clock = testClock();
        const harness = await fixture.start({ sim: { markets: 2, now: clock.now } });
        const { sim } = harness;
        const feed = sim.market.tokens[0]!.oracleFeedId;
        const client = await connect(harness.relay.url);
        await client.request({ op: 'subscribe', channel: 'oracle', markets: [feed] });
        await waitFor('the oracle snapshot', () => client.view('oracle', feed));
        // Prices move on every tick, but within the same second the publish time does not.
        for (let i = 0; i < 3; i++) sim.tick();
        const polls = await countPolls(harness.relay, 'oracle', 3);
        expect(polls).toBeGreaterThanOrEqual(3);
        expect(client.view('oracle', feed)!.updates).toBe(0);
        clock.advance(1_000);
        sim.tick();
        await expectState(client, 'oracle', feed, await upstreamOracle(sim, feed));
        expect(client.view('oracle', feed)!.updates).toBe(1);
      });

      it('announces a market resolving, and one expiring at the simulator pace, then closes its stream', async () => {
        const harness = await fixture.start({ sim: { markets: 8 } });
        const { sim } = harness;
        const [resolving, other] = sim.market.activeMarketIds() as [string, string];
        const client = await connect(harness.relay.url);
        await client.request({ op: 'subscribe', channel: 'market', markets: [resolving] });
        await waitFor('the market snapshot', () => client.view('market', resolving));

        sim.market.settle(resolving, 'RESOLVED');
        const closed = await waitFor('the closed status', () =>
          client.messages.find((message) => message.type === 'status' && message.market === resolving),
        );
        expect(closed).toEqual({
          type: 'status',
          channel: 'market',
          market: resolving,
          state: 'closed',
          reason: 'market resolved',
        });
        const messages = streamMessages(client, 'market', resolving).map((message) => message.type);
        expect(messages).toEqual(['snapshot', 'update', 'status']);
        expect(client.view('market', resolving)!.state).toEqual(await upstreamMarket(sim, resolving));
        expect(client.view('market', resolving)!.state).toMatchObject({ status: 'RESOLVED' });
        // The stream is gone: nothing is polled for it any more.
        await waitFor('the market target dropped', () => harness.relay.poller.targetCount('market') === 0);

        // The pace brings the soonest expiry forward; set over the admin API as an operator would.
        const soonest = sim.market
          .markets()
          .filter((market) => market.status === 'ACTIVE')
          .sort((a, b) => a.expiresAt - b.expiresAt)[0]!.id;
        await client.request({ op: 'subscribe', channel: 'market', markets: [soonest, other] });
        await waitFor('the market snapshot', () => client.view('market', soonest));
        const paced = await fetch(`${sim.url}/_sim/lifecycle`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ expireEveryMs: 1 }),
        });
        expect(paced.status).toBe(200);
        sim.tick();
        const expired = await waitFor('the expired stream closed', () =>
          client.messages.find((message) => message.type === 'status' && message.market === soonest),
        );
        expect(expired).toMatchObject({ state: 'closed', reason: 'market expired' });
        const update = streamMessages(client, 'market', soonest).find((message) => message.type === 'update');
        expect(update?.data).toMatchObject({ status: 'EXPIRED' });
        expect(client.violations).toEqual([]);
      });

      it('refuses ids that are not of the channel, and an oracle feed upstream does not have', async () => {
        const harness = await fixture.start({ sim: { markets: 2 } });
        const [market] = harness.sim.market.marketIds() as [string];
        const client = await connect(harness.relay.url);
        const cases: [Record<string, unknown>, string][] = [
          [
            { channel: 'probabilities', markets: [market] },
            'markets.0: the probabilities channel has one stream: "all"',
          ],
          [{ channel: 'oracle', markets: [market] }, 'markets.0: not an oracle feed id (0x and hex digits)'],
          [{ channel: 'market', markets: ['all'] }, 'markets.0: not a UUID'],
          [{ channel: 'market', markets: [market], depth: 10 }, '`depth` applies to the book channel only'],
        ];
        for (const [selection, message] of cases) {
          expect(await client.request({ op: 'subscribe', ...selection })).toMatchObject({
            type: 'error',
            code: 'bad_request',
            message,
          });
        }
        await client.request({ op: 'subscribe', channel: 'oracle', markets: ['0xdeadbeef'] });
        const error = await waitFor('the unknown feed error', () =>
          client.of('error').find((message) => message.code === 'unknown_market'),
        );
        expect(error).toEqual({
          type: 'error',
          code: 'unknown_market',
          message: 'oracle feed 0xdeadbeef does not exist upstream',
          channel: 'oracle',
          market: '0xdeadbeef',
        });
      });
    },
  );
}

/** Waits until the relay has made `count` more successful polls of `kind`; returns how many it made. */
async function countPolls(relay: { events: RelayEvents }, kind: Channel, count: number): Promise<number> {
  let polls = 0;
  const onPoll = ({ kind: polled, outcome }: { kind: Channel; outcome: string }) => {
    if (polled === kind && outcome === 'ok') polls += 1;
  };
  relay.events.on('poll:done', onPoll);
  try {
    await waitFor(`${count} ${kind} polls`, () => polls >= count);
  } finally {
    relay.events.off('poll:done', onPoll);
  }
  return polls;
}
