/**
 * Every message's `ts` belongs to the record it shows (protocol.md "Sequencing"): a poll that
 * brings nothing newer (here an oracle record older than the one published, which the relay rightly
 * does not publish) changes neither the state nor its times, so a late subscriber's snapshot of a
 * `seq` equals the update that produced that `seq` in everything but `type` and `data`'s form.
 */
import { describe, expect, it } from 'vitest';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

describe('record times', () => {
  const fixture = useHarness();

  it("gives a late subscriber's oracle snapshot the ts of the update that produced its seq", async () => {
    let time = Date.now();
    const { sim, relay } = await fixture.start({
      sim: { markets: 2, now: () => time },
      relay: { pricePollMs: 50 },
    });
    const feed = sim.market.tokens[0]!.oracleFeedId;
    const early = await ProtocolClient.connect(relay.url);
    fixture.opened.push(early);
    await early.request({ op: 'subscribe', channel: 'oracle', markets: [feed] });
    await waitFor('the first record', () => early.view('oracle', feed));

    time += 2_000;
    sim.tick();
    const update = await waitFor('the newer record as an update', () =>
      early.of('update').find((message) => message.channel === 'oracle'),
    );

    // Upstream goes back to an older record (a lagging replica): polled, not published.
    time -= 5_000;
    sim.tick();
    const olderPolls = () =>
      sim.requests.filter((request) => request.path === `/api/tokens/price/${feed}`).length;
    const pollsAtTick = olderPolls();
    await waitFor('two polls of the older record', () => olderPolls() >= pollsAtTick + 2);

    const late = await ProtocolClient.connect(relay.url);
    fixture.opened.push(late);
    await late.request({ op: 'subscribe', channel: 'oracle', markets: [feed] });
    const snapshot = await waitFor('the late snapshot', () =>
      late.of('snapshot').find((message) => message.channel === 'oracle'),
    );
    expect(snapshot.seq).toBe(update.seq);
    const { type: _u, ...updateFields } = update;
    const { type: _s, ...snapshotFields } = snapshot;
    // Oracle updates carry the whole record, so the two are equal but for `type`.
    expect(snapshotFields).toEqual(updateFields);
    expect(early.of('update').filter((message) => message.channel === 'oracle')).toHaveLength(1);
  });
});
