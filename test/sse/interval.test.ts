/**
 * `interval` as an SSE query parameter (docs/protocol.md "Per-subscription options"): the same
 * pacing as on a WebSocket (conflated updates to the latest state, each naming the `seq` it applies
 * to, the burst's last one without a further tick), and the same refusals, as 400 with the
 * protocol error code.
 */
import { describe, expect, it } from 'vitest';
import { appliesTo } from '../support/clients/message-recorder.ts';
import { SseClient } from '../support/clients/sse-client.ts';
import { expectedBook, type Harness, upstreamBook, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

describe('SSE interval', () => {
  let harness: Harness;
  const { opened, start } = useHarness();

  it('paces a book to one conflated update of the latest state per interval', async () => {
    harness = await start({ sim: { markets: 2 } });
    const [a] = harness.sim.market.marketIds();
    const client = await SseClient.connect(
      `${harness.relay.url}/v1/sse?channel=book&depth=10&markets=${a}&interval=300`,
    );
    opened.push(client);
    expect(client.status).toBe(200);
    await waitFor('the first snapshot', () => client.view('book', a!, 10));
    expect(client.messages[0]).toMatchObject({ type: 'subscribed', interval: 300 });
    const stream = harness.relay.registry.get({ channel: 'book', market: a!, depth: 10 })!;
    let latest = '';
    for (let step = 0; step < 6; step += 1) {
      harness.sim.tick();
      latest = JSON.stringify(expectedBook(await upstreamBook(harness.sim, a!), 10));
      await waitFor('the relay to take the tick', () => JSON.stringify(stream.state) === latest);
    }
    await waitFor('the latest book', () =>
      JSON.stringify(client.view('book', a!, 10)?.state) === latest ? true : undefined,
    );
    const sent = client.messages.filter((m) => m.type === 'snapshot' || m.type === 'update');
    expect(sent.length).toBeGreaterThan(1);
    for (const [i, m] of sent.entries()) if (i > 0) expect(appliesTo(m)).toBe(sent[i - 1]!.seq);
    expect(client.violations).toEqual([]);
  });

  it('refuses bad intervals with 400', async () => {
    harness = await start({ sim: { markets: 1 } });
    const [market] = harness.sim.market.marketIds();
    for (const query of [
      `channel=book&markets=${market}&interval=99`,
      `channel=book&markets=${market}&interval=60001`,
      `channel=book&markets=${market}&interval=1s`,
      `channel=book&markets=${market}&interval=`,
      `channel=trades&markets=${market}&interval=1000`,
    ]) {
      const response = await fetch(`${harness.relay.url}/v1/sse?${query}`);
      expect(response.status, query).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'bad_request' });
    }
    expect(harness.relay.sse.connections.size).toBe(0);
  });
});
