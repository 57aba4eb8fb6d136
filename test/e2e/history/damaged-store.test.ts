/**
 * A store file damaged inside (docs/history.md "When the store cannot write"): DuckDB opens it, as
 * its header is whole, and finds the damage only when a read reaches a block whose checksum fails.
 * The relay serves on: a replay over the damaged part ends with an `internal` error carrying its
 * id, the export of it is a 500 `internal` saying so, and live streams, their recording and the record of
 * every other stream go on as before; nothing crashes while serving.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_FILE, openDuckDbStore } from '../../../src/history/duckdb-store.ts';
import type { Relay } from '../../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import {
  recordingFolder,
  startRecordingRelay,
  syntheticBook,
  TextClient,
} from '../../support/replay-client.ts';
import { waitFor } from '../../support/wait-for.ts';

const RECORDED_FROM = Date.now() - 10 * 60_000;

let sim: SimulatorHandle;
let relay: Relay;
const folder = recordingFolder('history-damaged-');
const clients: TextClient[] = [];

/** A market of the simulator whose record is damaged: the relay may also poll it live. */
let damaged: string;

beforeAll(async () => {
  sim = await startSimulator({ markets: 2, seed: 17, tickMs: 20 });
  damaged = sim.market.activeMarketIds()[1]!;
  // A record of a few MB, incompressible enough to span many blocks, then 64 KiB of noise in its middle.
  const store = await openDuckDbStore(folder.dataDir);
  const rows = syntheticBook(damaged, 40_000, RECORDED_FROM, 10).map((row, i) =>
    i === 0 ? row : { ...row, data: `{"bids":[["0.5","${randomBytes(24).toString('hex')}"]],"asks":[]}` },
  );
  await store.append(rows);
  await store.close();
  const file = path.join(folder.dataDir, HISTORY_FILE);
  const descriptor = openSync(file, 'r+');
  writeSync(descriptor, randomBytes(64 * 1024), 0, 64 * 1024, Math.floor(statSync(file).size / 2));
  closeSync(descriptor);
  relay = await startRecordingRelay(sim, folder.dataDir);
});
afterAll(async () => {
  for (const client of clients) client.close();
  await relay?.close();
  await sim?.close();
  folder.remove();
});

describe('a store file damaged inside', () => {
  it('fails the reads that reach the damage, one request at a time, and serves and records on', async () => {
    const [market] = sim.market.activeMarketIds() as [string];
    const from = new Date(Date.now() - 1).toISOString();
    const client = await TextClient.connect(relay);
    clients.push(client);
    client.send({ op: 'subscribe', id: 'live', channel: 'book', markets: [market] });
    await waitFor('the live book', () => client.stream().length >= 5);

    client.send({
      op: 'replay',
      id: 'damaged',
      channel: 'book',
      markets: [damaged],
      from: new Date(RECORDED_FROM).toISOString(),
      speed: 'max',
    });
    const failed = await client.answer('error', 'damaged', 15_000);
    expect(failed).toMatchObject({ code: 'internal' });
    expect(client.of('replayed', 'damaged')).toEqual([]);

    // The export of it, in either format: a 500 saying so, as the store's first read fails.
    for (const format of ['ndjson', 'parquet']) {
      const response = await fetch(
        `${relay.url}/v1/history/book?market=${damaged}&from=${new Date(RECORDED_FROM).toISOString()}&format=${format}`,
      );
      expect(response.status, format).toBe(500);
      expect(await response.json(), format).toEqual({
        error: 'internal',
        message: expect.stringMatching(/^the record could not be read: .*Corrupt database file/),
      });
    }

    // since a time inside the damaged record: the read fails after `subscribed`, as an error with
    // the request's id, and the stream is not held.
    client.send({
      op: 'subscribe',
      id: 'since',
      channel: 'book',
      markets: [damaged],
      since: new Date(RECORDED_FROM + 60_000).toISOString(),
    });
    const sinceFailed = await client.answer('error', 'since', 15_000);
    expect(sinceFailed).toMatchObject({ code: 'upstream_unavailable', channel: 'book', market: damaged });
    client.send({ op: 'list', id: 'list' });
    const { subscriptions } = await client.answer('subscriptions', 'list');
    expect((subscriptions as { market: string }[]).map((entry) => entry.market)).toEqual([market]);

    // Live serving and its record go on: the live book's own record replays whole.
    const count = client.stream().length;
    await waitFor('live updates after the failed reads', () => client.stream().length >= count + 10);
    const sent = client.stream().filter(({ message }) => message.market === market);
    const to = new Date(Date.parse(sent.at(-1)!.message.rts as string) + 1).toISOString();
    client.send({
      op: 'replay',
      id: 'live-record',
      channel: 'book',
      markets: [market],
      from,
      to,
      speed: 'max',
    });
    const done = await client.answer('replayed', 'live-record');
    expect(done.messages).toBe(sent.length);
    const health = (await (await fetch(`${relay.url}/health`)).json()) as { history: { writing: boolean } };
    expect(health.history.writing).toBe(true);
  });
});
