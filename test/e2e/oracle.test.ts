/**
 * End to end, `oracle`, against every simulator profile: a stream resumes after a reconnect (the
 * feed id in any case), and sends an update only when upstream's publish time advances.
 */
import { describe, expect, it } from 'vitest';
import type { Channel } from '../../src/protocol/messages.ts';
import type { RelayEvents } from '../../src/relay/events.ts';
import { simulatorProfileNames } from '../../src/sim/profile.ts';
import { useHarness } from '../support/harness.ts';
import { ProtocolClient } from '../support/protocol-client.ts';
import { expectState, testClock, upstreamOracle } from '../support/upstream-state.ts';
import { waitFor } from '../support/wait-for.ts';

describe.each(simulatorProfileNames)('oracle end to end (%s profile)', (profile) => {
  const fixture = useHarness(profile);

  async function connect(url: string): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(url);
    fixture.opened.push(client);
    return client;
  }

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
});

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
