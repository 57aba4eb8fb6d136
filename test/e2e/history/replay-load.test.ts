/**
 * A replay at "max" beside live streams (docs/protocol.md "Replay", "Pacing"), checked by its
 * mechanism, in counts: the replaying connection's own live book and a neighbour connection's keep
 * receiving updates while the replay runs; a client that stops reading makes the replay wait at its
 * send-buffer ceiling, below the high-water mark where live messages would be held back, and is never
 * closed as a slow consumer; when it reads again the replay finishes, every message delivered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Relay } from '../../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import {
  recordingFolder,
  startRecordingRelay,
  syntheticBook,
  TextClient,
} from '../../support/replay-client.ts';
import { waitFor } from '../../support/wait-for.ts';

const BUSY = '5e1f0000-0000-4000-8000-0000000000b5';
const MESSAGES = 60_000;
const RECORDED_FROM = Date.now() - 10 * 60_000;
/** The relay's defaults (docs/protocol.md "Limits"): live messages are held back above it. */
const HIGH_WATER_BYTES = 1024 * 1024;

let sim: SimulatorHandle;
let relay: Relay;
const folder = recordingFolder('replay-load-');
const clients: TextClient[] = [];

beforeAll(async () => {
  sim = await startSimulator({ markets: 2, seed: 11, tickMs: 20 });
  relay = await startRecordingRelay(sim, folder.dataDir);
  await relay.history!.store.append(syntheticBook(BUSY, MESSAGES, RECORDED_FROM, 5));
});
afterAll(async () => {
  for (const client of clients) client.close();
  await relay?.close();
  await sim?.close();
  folder.remove();
});

async function liveClient(market: string): Promise<TextClient> {
  const client = await TextClient.connect(relay);
  clients.push(client);
  client.send({ op: 'subscribe', id: 'live', channel: 'book', markets: [market] });
  await waitFor('the live book', () => client.stream().length >= 2);
  return client;
}

const maxReplay = (id: string) => ({
  op: 'replay',
  id,
  channel: 'book',
  markets: [BUSY],
  from: new Date(RECORDED_FROM).toISOString(),
  speed: 'max',
});

describe('a replay at "max"', () => {
  it('never stops the live books of its own connection or of a neighbour, nor gets a stalled reader closed', async () => {
    const [market] = sim.market.activeMarketIds();
    const neighbour = await liveClient(market!);
    const replaying = await liveClient(market!);
    // The reader stops reading: the replay fills the send buffer up to its ceiling and waits there.
    replaying.ws.pause();
    replaying.send(maxReplay('busy'));
    const connection = await waitFor('the replay waiting at its ceiling', () =>
      [...relay.ws.connections].find((open) => open.bufferedBytes >= 128 * 1024),
    );
    const neighbourBefore = neighbour.stream().length;
    await waitFor(
      'the neighbour live while the replay waits',
      () => neighbour.stream().length >= neighbourBefore + 3,
    );
    expect(connection.bufferedBytes).toBeLessThan(HIGH_WATER_BYTES);
    expect(connection.isHoldingBack).toBe(false);
    expect(replaying.closeCode).toBeUndefined();

    // Reading again, it gets the whole replay, its live book interleaved, the neighbour's flowing.
    const neighbourDuring = neighbour.stream().length;
    replaying.ws.resume();
    const done = await replaying.answer('replayed', 'busy', 20_000);
    expect(done).toEqual({ type: 'replayed', id: 'busy', messages: MESSAGES });
    expect(replaying.stream('busy')).toHaveLength(MESSAGES);
    const order = replaying.received.map(({ message }) => message);
    const firstReplayed = order.findIndex((message) => message.replay === 'busy');
    const lastReplayed = order.findLastIndex((message) => message.replay === 'busy');
    const liveBetween = order
      .slice(firstReplayed, lastReplayed)
      .filter((message) => message.type === 'update' && message.replay === undefined);
    expect(liveBetween.length).toBeGreaterThan(0);
    expect(neighbour.stream().length).toBeGreaterThan(neighbourDuring);
    expect(replaying.closeCode).toBeUndefined();
  });
});
