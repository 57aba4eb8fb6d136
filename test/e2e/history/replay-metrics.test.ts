/**
 * The replays' metrics (docs/operations.md "Metrics") move when replays run: a replay of a record
 * with a hole counts its messages and its `replay_gap`, a replay running shows in
 * `replays_running`, and each refusal counts under its reason.
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

/** 40 updates a second apart, with the 20th never recorded: one hole. */
const HOLED = '5e1f0000-0000-4000-8000-000000000011';
/** 600 updates a second apart: replayed at speed 1 it runs for the rest of the test. */
const SLOW = '5e1f0000-0000-4000-8000-000000000012';
const RECORDED_FROM = Date.now() - 20 * 60_000;
const M = 'market_relay_';

let sim: SimulatorHandle;
let relay: Relay;
const folder = recordingFolder('replay-metrics-');
const clients: TextClient[] = [];

beforeAll(async () => {
  sim = await startSimulator({ markets: 1, seed: 7, tickMs: 50 });
  relay = await startRecordingRelay(sim, folder.dataDir);
  const holed = syntheticBook(HOLED, 40, RECORDED_FROM, 1_000).filter((record) => record.seq !== 20);
  await relay.history!.store.append([...holed, ...syntheticBook(SLOW, 600, RECORDED_FROM, 1_000)]);
});
afterAll(async () => {
  for (const client of clients) client.close();
  await relay?.close();
  await sim?.close();
  folder.remove();
});

/** The scraped value of `name` (with `reason` when given). */
async function metric(name: string, reason?: string): Promise<number> {
  const text = await (await fetch(`${relay.operatorUrl ?? relay.url}/metrics`)).text();
  const labels = reason === undefined ? '' : `\\{reason="${reason}"\\}`;
  const match = new RegExp(`^${M}${name}${labels} (\\S+)$`, 'm').exec(text);
  if (match === null) throw new Error(`no ${name} ${reason ?? ''} in the scrape`);
  return Number(match[1]);
}

const iso = (ms: number) => new Date(ms).toISOString();
const replay = (id: string, market: string, speed: number | 'max') => ({
  op: 'replay',
  id,
  channel: 'book',
  markets: [market],
  from: iso(RECORDED_FROM),
  speed,
});

describe('replay metrics', () => {
  it('count the messages and gaps a replay sends, the replays running and the refusals by reason', async () => {
    const client = await TextClient.connect(relay);
    clients.push(client);
    expect(await metric('replays_running')).toBe(0);
    expect(await metric('replay_messages_sent_total')).toBe(0);
    expect(await metric('replay_gaps_sent_total')).toBe(0);

    client.send(replay('holed', HOLED, 'max'));
    const replayed = await client.answer('replayed', 'holed');
    expect(replayed.messages).toBe(39);
    expect(client.of('replay_gap', 'holed')).toHaveLength(1);
    expect(await metric('replays_started_total')).toBe(1);
    expect(await metric('replay_messages_sent_total')).toBe(39);
    expect(await metric('replay_gaps_sent_total')).toBe(1);

    // Two slow replays fill the connection's share; a third is refused while they run.
    client.send(replay('slow-1', SLOW, 1));
    client.send(replay('slow-2', SLOW, 1));
    await waitFor('two replays running', async () => (await metric('replays_running')) === 2);
    // A running replay's messages count before it ends.
    await waitFor(
      'the running replays counted',
      async () => (await metric('replay_messages_sent_total')) > 39,
    );
    client.send(replay('third', SLOW, 1));
    expect((await client.answer('error', 'third')).code).toBe('limit_exceeded');
    client.send(replay('slow-1', SLOW, 1));
    expect((await client.answer('error', 'slow-1')).code).toBe('bad_request');
    client.send({ ...replay('backwards', HOLED, 1), to: iso(RECORDED_FROM - 60_000) });
    expect((await client.answer('error', 'backwards')).code).toBe('bad_request');
    client.send({
      ...replay('too old', HOLED, 1),
      from: iso(Date.now() - 3 * 86_400_000),
      to: iso(Date.now() - 2 * 86_400_000),
    });
    expect((await client.answer('error', 'too old')).code).toBe('out_of_retention');
    expect(await metric('replays_refused_total', 'connection_limit')).toBe(1);
    expect(await metric('replays_refused_total', 'duplicate_id')).toBe(1);
    expect(await metric('replays_refused_total', 'invalid')).toBe(1);
    expect(await metric('replays_refused_total', 'out_of_retention')).toBe(1);
    expect(await metric('replays_refused_total', 'address_limit')).toBe(0);
    expect(await metric('replays_started_total')).toBe(3);

    client.send({ op: 'replay_stop', id: 'slow-1' });
    client.send({ op: 'replay_stop', id: 'slow-2' });
    await waitFor('the stopped replays ended', async () => (await metric('replays_running')) === 0);
    const sent = (await client.answer('replayed', 'slow-1')).messages as number;
    const sent2 = (await client.answer('replayed', 'slow-2')).messages as number;
    expect(await metric('replay_messages_sent_total')).toBe(39 + sent + sent2);
  });
});
