/**
 * A replay marks where the record has a hole (docs/protocol.md "Replay", "Gaps"): a relay that
 * recorded a book is closed and another started on the same record, so the book's stream goes on in
 * a new epoch; a replay over both gives back every message either relay sent, with one `replay_gap`
 * (`reason: "epoch_changed"`) from the last message of the first epoch to the first of the second.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Relay } from '../../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import { recordingFolder, startRecordingRelay, TextClient } from '../../support/replay-client.ts';
import { waitFor } from '../../support/wait-for.ts';

let sim: SimulatorHandle;
const relays: Relay[] = [];
const folder = recordingFolder('replay-gaps-');
const clients: TextClient[] = [];

beforeAll(async () => {
  sim = await startSimulator({ markets: 2, seed: 23, tickMs: 20 });
});
afterAll(async () => {
  for (const client of clients) client.close();
  for (const relay of relays) await relay.close();
  await sim?.close();
  folder.remove();
});

async function liveBook(market: string): Promise<{ relay: Relay; client: TextClient }> {
  const relay = await startRecordingRelay(sim, folder.dataDir);
  relays.push(relay);
  const client = await TextClient.connect(relay);
  clients.push(client);
  client.send({ op: 'subscribe', id: 'live', channel: 'book', markets: [market] });
  await waitFor('a changing book', () => client.stream().length >= 10);
  return { relay, client };
}

describe('a replay across a relay restart', () => {
  it('gives back both epochs with an epoch_changed gap between them', async () => {
    const [market] = sim.market.activeMarketIds();
    const from = new Date(Date.now() - 1).toISOString();
    const first = await liveBook(market!);
    // Closing the relay (polls stopped first) writes what it buffered and ends the connection, which
    // received everything sent; the next relay opens the same record.
    await first.relay.close();
    relays.length = 0;
    await waitFor('the first connection closed', () => first.client.closeCode !== undefined);
    const second = await liveBook(market!);
    // Every message of the stream up to the last one received: none is still on its way.
    const to = new Date(Date.parse(second.client.stream().at(-1)!.message.rts as string) + 1).toISOString();
    const sent = [...first.client.stream(), ...second.client.stream()]
      .map(({ message }) => message)
      .filter((message) => (message.rts as string) < to);
    const epochs = [...new Set(sent.map((message) => message.epoch))];
    expect(epochs).toHaveLength(2);

    second.client.send({
      op: 'replay',
      id: 'both',
      channel: 'book',
      markets: [market],
      from,
      to,
      speed: 'max',
    });
    const done = await second.client.answer('replayed', 'both');
    const replayed = second.client.stream('both').map(({ message: { replay: _id, ...message } }) => message);
    expect(replayed).toEqual(sent);
    expect(done.messages).toBe(sent.length);
    const lastOfFirst = sent.filter((message) => message.epoch === epochs[0]).at(-1)!;
    const firstOfSecond = sent.find((message) => message.epoch === epochs[1])!;
    const gaps = second.client.of('replay_gap', 'both').map(({ message }) => message);
    expect(gaps).toEqual([
      { type: 'replay_gap', id: 'both', channel: 'book', market, from, to: sent[0]!.rts },
      {
        type: 'replay_gap',
        id: 'both',
        channel: 'book',
        market,
        from: lastOfFirst.rts,
        to: firstOfSecond.rts,
        reason: 'epoch_changed',
      },
    ]);
    // The gap comes just before the first message of the new epoch.
    const order = second.client.received.map(({ message }) => message);
    const gapAt = order.findIndex((message) => message.type === 'replay_gap' && message.reason !== undefined);
    expect(order[gapAt + 1]).toMatchObject({ replay: 'both', epoch: epochs[1] });
  });
});
