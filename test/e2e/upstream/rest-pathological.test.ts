/**
 * Pathological upstream bodies cost their own `rest` stream only (docs/protocol.md "`rest` data"),
 * against a fake upstream that serves one path's body as the test sets it: a body nested 100,000
 * deep makes the stream stale without spending a `seq`, so after recovery the next message is
 * `seq` + 1; a body whose patch would outgrow it comes as a snapshot with the next `seq`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Relay, RelayConfig } from '../../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import { type Message, ProtocolClient } from '../../support/clients/protocol-client.ts';
import { startHarnessRelay } from '../../support/harness.ts';
import { type ScriptedPath, startScriptedPath } from '../../support/upstream/scripted-path.ts';
import { waitFor } from '../../support/wait-for.ts';

const path = '/api/rewards/leaderboard';
const board = (round: number) =>
  JSON.stringify({
    success: true,
    leaderboard: Array.from({ length: 20 }, (_, i) => ({
      username: `trader${i}`,
      points: String(1_000 - i + (i === 3 ? round : 0)),
    })),
  });

describe('rest stream against pathological bodies', () => {
  const opened: Array<{ close(): unknown }> = [];
  afterEach(async () => {
    for (const resource of opened.splice(0).reverse()) await resource.close();
  });

  async function start(
    tuning: Partial<RelayConfig['tuning']> = {},
    first = board(0),
  ): Promise<{ fake: ScriptedPath; relay: Relay; client: ProtocolClient }> {
    const sim: SimulatorHandle = await startSimulator({ markets: 2, seed: 3, tickMs: 0 });
    opened.push(sim);
    const fake = await startScriptedPath(sim.url, path, first);
    opened.push(fake);
    // Stale after 5 polls (100 ms) rather than the harness's 25: the tests wait for it.
    const relay = await startHarnessRelay(sim, {
      upstream: fake.url,
      tuning: { staleAfterFactor: 5, ...tuning },
    });
    opened.push(relay);
    const client = await ProtocolClient.connect(relay.url);
    opened.push(client);
    client.send({ op: 'subscribe', id: 1, channel: 'rest', paths: [path] });
    await waitFor('the first snapshot', () => client.view('rest', path));
    return { fake, relay, client };
  }

  const streamMessages = (client: ProtocolClient): Message[] =>
    client.messages.filter((m) => m.type === 'snapshot' || m.type === 'update');

  it('a body nested 100,000 deep: stale, no seq spent; after recovery the next message is seq + 1', async () => {
    const { fake, client } = await start();
    fake.serve(board(1));
    await waitFor('an update', () => (client.view('rest', path)?.seq === 2 ? true : undefined));
    fake.serve(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    await waitFor('stale', () =>
      client.messages.find((m) => m.type === 'status' && m.state === 'stale' && m.path === path),
    );
    const stale = client.messages.find((m) => m.type === 'status' && m.state === 'stale');
    expect(stale?.reason).toBe('upstream sent an invalid response');
    fake.serve(board(2));
    await waitFor('live again', () =>
      client.messages.find((m) => m.type === 'status' && m.state === 'live' && m.path === path),
    );
    await waitFor('the next message', () => (streamMessages(client).length >= 3 ? true : undefined));
    expect(streamMessages(client).map((m) => m.seq)).toEqual([1, 2, 3]);
    expect(client.violations).toEqual([]);
    expect(client.view('rest', path)?.state).toEqual(JSON.parse(board(2)));
  });

  it('a patch larger than the body: sent as a snapshot with the next seq, then patches again', async () => {
    const { fake, client } = await start();
    const list = Array.from({ length: 40 }, (_, i) => `entry ${i}`);
    fake.serve(JSON.stringify({ list }));
    await waitFor('the list', () => (client.view('rest', path)?.seq === 2 ? true : undefined));
    fake.serve(JSON.stringify({ list: ['new', ...list] }));
    await waitFor('the list prepended', () => (client.view('rest', path)?.seq === 3 ? true : undefined));
    const [, , prepended] = streamMessages(client);
    expect(prepended).toMatchObject({ type: 'snapshot', seq: 3, data: { list: ['new', ...list] } });
    expect(client.violations).toEqual([]);
  });

  it('a stream of large bodies holds at most its resume bytes bound', async () => {
    // 6,000 records of about 100 bytes; each body changes every other record, so each update is
    // about half the body (300 KB): four of them are past the bound of 1 MiB. (The ring's own test
    // holds updates of 3 MB within its bound.)
    const resumeBufferBytes = 1024 * 1024;
    const body = (round: number) =>
      JSON.stringify({
        records: Array.from({ length: 6_000 }, (_, i) => ({
          id: i,
          note: `${i % 2 === 0 ? round : 0}`.padEnd(80, '.'),
        })),
      });
    const { fake, relay, client } = await start({ resumeBufferBytes }, body(0));
    const [stream] = relay.registry.streamsOf('rest', path);
    for (let round = 1; round <= 4; round++) {
      fake.serve(body(round));
      await waitFor(`round ${round}`, () =>
        client.view('rest', path)?.seq === round + 1 ? true : undefined,
      );
      expect(stream?.resumeBufferBytes).toBeLessThanOrEqual(resumeBufferBytes);
    }
    expect(streamMessages(client).map((m) => m.type)).toEqual(['snapshot', ...Array(4).fill('update')]);
    expect(stream?.updatesSince(stream.epoch, 1)).toBeUndefined();
    expect(stream?.updatesSince(stream.epoch, 3)).toHaveLength(2);
    expect(client.violations).toEqual([]);
  });
});
