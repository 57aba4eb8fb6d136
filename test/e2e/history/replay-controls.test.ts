/**
 * `replay`'s controls and refusals (docs/protocol.md "Replay"), over a record holding synthetic
 * streams beside the live ones: every bad input gets its documented error with the request's `id`
 * and changes nothing else; the limits per connection and per client address; a duplicate id;
 * `replay_stop`; closing the connection ends its replays; the relay closing stops them all first.
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

/** A stream recorded one update a second for ten minutes: a replay of it at speed 1 outlasts any test. */
const SLOW = '5e1f0000-0000-4000-8000-000000000001';
const RECORDED_FROM = Date.now() - 20 * 60_000;

let sim: SimulatorHandle;
let relay: Relay;
const folder = recordingFolder('replay-controls-');
const clients: TextClient[] = [];

beforeAll(async () => {
  sim = await startSimulator({ markets: 2, seed: 5, tickMs: 20 });
  relay = await startRecordingRelay(sim, folder.dataDir);
  await relay.history!.store.append(syntheticBook(SLOW, 600, RECORDED_FROM, 1_000));
});
afterAll(async () => {
  for (const client of clients) client.close();
  await relay?.close();
  await sim?.close();
  folder.remove();
});

async function client(): Promise<TextClient> {
  const opened = await TextClient.connect(relay);
  clients.push(opened);
  return opened;
}

const iso = (ms: number) => new Date(ms).toISOString();
const slowReplay = (id: unknown) => ({
  op: 'replay',
  id,
  channel: 'book',
  markets: [SLOW],
  from: iso(RECORDED_FROM),
  speed: 1,
});

describe('replay refusals', () => {
  it('answers each bad input with its error and the request id, and changes nothing else', async () => {
    const [market] = sim.market.activeMarketIds();
    const live = await client();
    live.send({ op: 'subscribe', id: 'live', channel: 'book', markets: [market] });
    await waitFor('the live book', () => live.stream().length >= 2);
    live.send({ op: 'list', id: 'before' });
    const before = (await live.answer('subscriptions', 'before')).subscriptions as { market: string }[];
    const now = Date.now();
    const base = { op: 'replay', channel: 'book', markets: [SLOW], from: iso(now - 60_000) };
    const cases: [string, object, string][] = [
      ['from after to', { ...base, to: iso(now - 120_000) }, 'bad_request'],
      ['from in the future', { ...base, from: iso(now + 60_000) }, 'bad_request'],
      [
        'past retention',
        { ...base, from: iso(now - 3 * 86_400_000), to: iso(now - 2 * 86_400_000) },
        'out_of_retention',
      ],
      ['speed 0', { ...base, speed: 0 }, 'bad_request'],
      ['speed -1', { ...base, speed: -1 }, 'bad_request'],
      ['speed "fast"', { ...base, speed: 'fast' }, 'bad_request'],
      ['unknown channel', { ...base, channel: 'nonsense' }, 'unknown_channel'],
      ['not a time', { ...base, from: 'yesterday' }, 'bad_request'],
      ['a time without its zone', { ...base, from: '2026-12-01T10:00:00' }, 'bad_request'],
      ['every market', { ...base, channel: 'price', markets: ['*'] }, 'bad_request'],
      ['depth off the book', { ...base, channel: 'price', depth: 5 }, 'bad_request'],
      ['not a market id', { ...base, markets: ['nope'] }, 'bad_request'],
      ['stopping no replay', { op: 'replay_stop' }, 'bad_request'],
    ];
    for (const [what, request, code] of cases) {
      live.send({ ...request, id: what });
      const error = await live.answer('error', what);
      expect(error.code, what).toBe(code);
      expect(error.message, what).toEqual(expect.any(String));
    }
    // A replay needs its id to name its messages.
    live.send({ ...base });
    await waitFor('the refusal of a replay without id', () =>
      live.of('error').some(({ message }) => message.id === undefined && message.code === 'bad_request'),
    );
    expect(live.of('replayed')).toEqual([]);
    expect(relay.replays.running).toBe(0);
    // The live stream goes on, and the connection holds what it held.
    const liveCount = live.stream().length;
    await waitFor('live updates after the refusals', () => live.stream().length > liveCount + 2);
    live.send({ op: 'list', id: 'after' });
    const after = (await live.answer('subscriptions', 'after')).subscriptions as { market: string }[];
    expect(after.map((entry) => entry.market)).toEqual(before.map((entry) => entry.market));
  });
});

describe('replay limits and stop', () => {
  it('holds 2 replays per connection and 8 per address, refuses a running id, stops on replay_stop and close', async () => {
    const first = await client();
    first.send(slowReplay('a'));
    first.send(slowReplay(1));
    await waitFor('two replays running', () => relay.replays.running === 2);
    // The id 1 and the id "1" are two replays; the same id twice is refused while it runs.
    first.send(slowReplay('a'));
    expect((await first.answer('error', 'a')).code).toBe('bad_request');
    first.send(slowReplay('1'));
    const perConnection = await first.answer('error', '1');
    expect(perConnection).toMatchObject({ code: 'limit_exceeded', channel: 'book' });
    expect(perConnection.message).toMatch(/2 per connection/);

    const others = await Promise.all([client(), client(), client()]);
    for (const [i, other] of others.entries()) {
      other.send(slowReplay(`x${i}`));
      other.send(slowReplay(`y${i}`));
    }
    await waitFor('eight replays from one address', () => relay.replays.running === 8);
    const ninth = await client();
    ninth.send(slowReplay('ninth'));
    const perAddress = await ninth.answer('error', 'ninth');
    expect(perAddress.code).toBe('limit_exceeded');
    expect(perAddress.message).toMatch(/8 per client address/);

    // replay_stop ends one: `replayed` says how many it sent and that it was stopped.
    await waitFor('the first replay sending', () => first.stream('a').length > 0);
    first.send({ op: 'replay_stop', id: 'a' });
    const stopped = await first.answer('replayed', 'a');
    expect(stopped).toEqual({ type: 'replayed', id: 'a', messages: first.stream('a').length, stopped: true });
    expect(first.stream('a').length).toBeGreaterThan(0);
    await waitFor('the stopped replay released', () => relay.replays.running === 7);
    ninth.send(slowReplay('ninth again'));
    await waitFor('a replay started in the freed place', () => ninth.stream('ninth again').length > 0);

    // Closing a connection ends its replays and frees their places.
    for (const other of others) other.close();
    await waitFor('closed connections release their replays', () => relay.replays.running === 2);
    first.close();
    ninth.close();
    await waitFor('every replay ended', () => relay.replays.running === 0);
  });
});

describe('a relay closing', () => {
  it('stops every replay and waits for its read to end before the store closes', async () => {
    const reader = await client();
    reader.send(slowReplay('closing'));
    await waitFor('the replay sending', () => reader.stream('closing').length > 0);
    await relay.replays.stopAll();
    expect(relay.replays.running).toBe(0);
    expect(await reader.answer('replayed', 'closing')).toMatchObject({ stopped: true });
  });
});
