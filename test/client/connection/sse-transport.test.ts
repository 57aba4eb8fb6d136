/**
 * The SDK over Server-Sent Events (docs/client.md "Without WebSocket"): the same books and prices
 * as over the WebSocket, resumed without a snapshot after the response is cut, with the API key.
 */
import { describe, expect, it } from 'vitest';
import { type Harness, useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';
import {
  connectRecorded,
  expectBooksEqualUpstream,
  expectPricesEqualUpstream,
  type RecordedClient,
  tickAndPublish,
} from '../sdk-support.ts';

describe('client SDK over SSE', () => {
  let harness: Harness;
  const { opened, start } = useHarness();

  function sdk(options: Parameters<typeof connectRecorded>[1] = {}): RecordedClient {
    const recorded = connectRecorded(harness.relay.url, { transport: 'sse', ...options });
    opened.push(recorded.client);
    return recorded;
  }

  it('keeps books and prices equal to upstream, and resumes a cut response without a snapshot', async () => {
    // Stale only after a second without a poll: a loaded machine must not turn this into an error.
    harness = await start({
      sim: { markets: 3 },
      relay: { apiKeys: ['k1'], tuning: { staleAfterFactor: 50 } },
    });
    const markets = harness.sim.market.marketIds().slice(0, 2);
    const { client, errors, opens } = sdk({ apiKey: 'k1' });
    const books = markets.flatMap((m) => [client.subscribeBook(m), client.subscribeBook(m, { depth: 10 })]);
    const prices = markets.map((m) => client.subscribePrice(m));
    await expectBooksEqualUpstream(harness.sim, books);
    await expectPricesEqualUpstream(harness.sim, prices);
    // One response per (channel, depth): book full, book 10, price.
    expect(harness.relay.sse.connections.size).toBe(3);

    let snapshots = 0;
    let updates = 0;
    for (const book of books) {
      book.on('snapshot', () => snapshots++);
      book.on('update', () => updates++);
    }
    for (let round = 0; round < 2; round++) {
      await tickAndPublish(harness.sim, harness.relay, markets[0]!);
      await expectBooksEqualUpstream(harness.sim, books);
    }
    expect(updates).toBeGreaterThan(0);

    // The relay cuts every response: the SDK reconnects and resumes from its last positions.
    for (const connection of harness.relay.sse.connections) connection.close('test cut');
    await waitFor('the SDK to reconnect', () => opens.includes(true));
    await waitFor('three responses again', () => harness.relay.sse.connections.size === 3);
    await tickAndPublish(harness.sim, harness.relay, markets[0]!);
    await expectBooksEqualUpstream(harness.sim, books);
    await expectPricesEqualUpstream(harness.sim, prices);
    expect(snapshots).toBe(0);
    expect(errors.filter((error) => error.code !== 'connection_failed')).toEqual([]);
  });

  it('is refused without the API key, and stops', async () => {
    harness = await start({ sim: { markets: 1 }, relay: { apiKeys: ['k1'] } });
    const { client, errors } = sdk({ apiKey: 'wrong' });
    client.subscribePrice(harness.sim.market.marketIds()[0]!);
    await waitFor('the refusal', () => client.status === 'closed');
    expect(errors.map((error) => error.code)).toContain('refused');
  });
});
