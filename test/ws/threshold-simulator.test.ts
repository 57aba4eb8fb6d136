/**
 * A `price` `threshold` on the simulator's moving markets (docs/protocol.md "Per-subscription
 * options"), its pace kept and its clock shortened twentyfold: markets evolve every 12 ms and prices
 * are polled every 50 ms, four ticks of the market a poll as at the defaults (250 ms and 1 s). Over
 * sixty polls of markets whose books change every tick, a subscriber of `"threshold": "0.05"` gets
 * at most a third of the messages of a plain one, each a move of the threshold or a catch-up (no
 * more of those than one in `THRESHOLD_CATCH_UP_POLLS + 1` polls); once the markets stop (the
 * simulator's admin API), it holds the plain subscriber's state within that many polls. Counted in
 * messages and polls, never timed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { THRESHOLD_CATCH_UP_POLLS as CATCH_UP } from '../../packages/protocol/src/protocol/limits.ts';
import type { PriceData } from '../../packages/protocol/src/protocol/messages.ts';
import { thresholdMove } from '../../src/relay/streams/threshold.ts';
import { startSimulator } from '../../src/sim/server.ts';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { startHarnessRelay } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

const THRESHOLD = '0.05';
/** A minute of the default price poll. */
const POLLS = 60;

describe('price threshold on moving markets', () => {
  const opened: Array<{ close(): unknown }> = [];
  afterEach(async () => {
    for (const resource of opened.splice(0).reverse()) await resource.close();
  });

  it('sends a third of the messages or fewer, only moves and catch-ups, and ends on the same state', async () => {
    const sim = await startSimulator({ markets: 8, seed: 11, tickMs: 12 });
    opened.push(sim);
    // Markets 0, 2, 4 and 6 are quoted in 0.01 and priced (docs/upstream.md): five cents are five ticks.
    const markets = [0, 2, 4, 6].map((index) => sim.market.marketIds()[index]!);
    const relay = await startHarnessRelay(sim, { pricePollMs: 50 });
    opened.push(relay);
    const pricePolls = () => sim.requests.filter(({ path }) => path === '/clob/market-prices/batch').length;

    const plain = await ProtocolClient.connect(relay.url);
    const gated = await ProtocolClient.connect(relay.url);
    opened.push(plain, gated);
    await plain.request({ op: 'subscribe', channel: 'price', markets });
    await gated.request({ op: 'subscribe', channel: 'price', markets, threshold: THRESHOLD });
    /** The messages after the first snapshot (a paced message may be a snapshot, the smaller one). */
    const changes = (client: ProtocolClient) =>
      markets.reduce(
        (sum, market) =>
          sum +
          client.messages.filter(
            ({ type, market: of }) => of === market && (type === 'snapshot' || type === 'update'),
          ).length -
          1,
        0,
      );
    const began = pricePolls();
    await waitFor(`${POLLS} price polls`, () => pricePolls() - began >= POLLS || undefined);
    const during = { plain: changes(plain), gated: changes(gated) };
    const polls = pricePolls() - began;

    // Markets stop; the relay's next polls find nothing new.
    const stopped = await fetch(`${sim.url}/_sim/activity`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ booksChanging: false }),
    });
    expect(stopped.status).toBe(200);
    const stoppedAt = pricePolls();
    const state = (client: ProtocolClient, market: string) =>
      client.view('price', market)?.state as PriceData;
    const settled = await waitFor('the gated subscriber at the plain one’s state', () => {
      const same = markets.every(
        (market) => JSON.stringify(state(gated, market)) === JSON.stringify(state(plain, market)),
      );
      // Equal after two polls of the still markets at least: the one in flight when they stopped may have moved them.
      return same && pricePolls() - stoppedAt > 1 ? pricePolls() : undefined;
    });

    // The markets moved on most polls, and the threshold kept most of it back.
    expect(during.plain, JSON.stringify(during)).toBeGreaterThanOrEqual((POLLS * markets.length) / 2);
    expect(during.gated * 3, `${JSON.stringify(during)} over ${polls} polls`).toBeLessThanOrEqual(
      during.plain,
    );
    // Each message moved a watched price by the threshold from the one before, or is a catch-up.
    const allPolls = settled - began;
    for (const market of markets) {
      const received = gated.messages.filter(
        ({ type, market: of }) => of === market && (type === 'snapshot' || type === 'update'),
      );
      let held = received[0]!.data as PriceData;
      let catchUps = 0;
      for (const message of received.slice(1)) {
        const next = { ...held, ...(message.data as PriceData) };
        if (thresholdMove(held, next, THRESHOLD) !== 'moved') catchUps += 1;
        held = next;
      }
      expect(catchUps, `${market}: ${received.length} messages over ${allPolls} polls`).toBeLessThanOrEqual(
        Math.ceil(allPolls / (CATCH_UP + 1)) + 1,
      );
    }
    // The final state arrived within the catch-up bound of the markets stopping (a few polls of
    // slack: one in flight when they stopped, and the moments the counts were read).
    expect(settled - stoppedAt).toBeLessThanOrEqual(CATCH_UP + 5);
    for (const client of [plain, gated]) expect(client.violations).toEqual([]);
  });
});
