/**
 * `relay.history(...)` against a relay that records (a temporary --data-dir): the NDJSON export of
 * a book read as it streams, each message as the live client received it (`seq`, `epoch`, `data`,
 * checksum); a refusal of the export (`history_off`, a bad range) thrown as `history_refused`, and a
 * bad option thrown before anything is fetched.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StreamMessage } from '../../../packages/protocol/src/protocol/messages.ts';
import { useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';
import { connectRecorded } from '../sdk-support.ts';

const history = (dataDir: string) => ({
  history: { store: 'embedded' as const, dataDir, retentionMs: 3_600_000, maxBytes: 1024 ** 3 },
});

describe('client SDK: relay.history()', () => {
  const { opened, start } = useHarness();
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('reads a recorded book back from the export as the live client received it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sdk-history-'));
    dirs.push(dataDir);
    const harness = await start({ sim: { markets: 2 }, relay: history(dataDir) });
    const [market] = harness.sim.market.activeMarketIds() as [string];
    const from = new Date(Date.now() - 1_000);
    const { client, errors } = connectRecorded(harness.relay.url, { encoding: 'json' });
    opened.push(client);
    const book = client.subscribeBook(market);
    const live: StreamMessage[] = [];
    book.on('snapshot', ({ message }) => live.push(message));
    book.on('update', ({ message }) => live.push(message));
    await waitFor('the snapshot', () => book.status === 'live');
    for (let step = 0; step < 20 && live.length < 6; step++) {
      harness.sim.tick();
      const seen = live.length;
      await waitFor('the book to move', () => live.length > seen, { timeoutMs: 2_000 }).catch(
        () => undefined,
      );
    }
    expect(live.length).toBeGreaterThanOrEqual(3);

    const read: StreamMessage[] = [];
    for await (const message of client.history({ channel: 'book', market, from })) read.push(message);
    const shape = (message: StreamMessage) => ({
      epoch: message.epoch,
      seq: message.seq,
      data: message.data,
      checksum: (message as { checksum?: number }).checksum,
    });
    expect(read.length).toBeGreaterThanOrEqual(live.length - 1);
    const recorded = new Map(read.map((message) => [message.seq, shape(message)]));
    for (const message of live.filter((message) => message.type === 'update'))
      expect(recorded.get(message.seq), `update ${message.seq}`).toEqual(shape(message));
    expect(read.every((message) => message.channel === 'book' && message.market === market)).toBe(true);
    expect(read.map((message) => message.seq)).toEqual(
      [...read.map((message) => message.seq)].sort((a, b) => a - b),
    );
    expect(errors).toEqual([]);

    // Leaving early reads no further.
    for await (const message of client.history({ channel: 'book', market, from })) {
      expect(message.seq).toBe(read[0]!.seq);
      break;
    }
  });

  it('throws the export refusal as history_refused, and a bad option before fetching', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sdk-history-'));
    dirs.push(dataDir);
    const harness = await start({ sim: { markets: 2 }, relay: history(dataDir) });
    const [market] = harness.sim.market.activeMarketIds() as [string];
    const { client } = connectRecorded(harness.relay.url, { encoding: 'json' });
    opened.push(client);
    const read = async (options: Parameters<typeof client.history>[0]) => {
      for await (const _message of client.history(options)) {
        // drained
      }
    };
    // Past the retention (1 h): the relay refuses the range.
    await expect(
      read({ channel: 'book', market, from: '2020-01-01T00:00:00Z', to: '2020-01-02T00:00:00Z' }),
    ).rejects.toMatchObject({
      code: 'history_refused',
      message: expect.stringMatching(/400: out_of_retention/),
    });
    let fetched = 0;
    const counting = () => {
      fetched += 1;
      return Promise.reject(new Error('not to be called'));
    };
    for (const bad of [
      { channel: 'book' as const, market, from: 'yesterday' },
      { channel: 'book' as const, market: 'nope', from: '2026-01-01T00:00:00Z' },
      { channel: 'price' as const, market, from: '2026-01-01T00:00:00Z', depth: 10 as const },
    ])
      expect(() => client.history({ ...bad, fetch: counting })).toThrow(TypeError);
    expect(fetched).toBe(0);
  });

  it('says history_refused when the relay records nothing', async () => {
    const harness = await start({ sim: { markets: 2 } });
    const [market] = harness.sim.market.activeMarketIds() as [string];
    const { client } = connectRecorded(harness.relay.url, { encoding: 'json' });
    opened.push(client);
    await waitFor('the connection', () => client.status === 'open');
    const messages = client.history({ channel: 'book', market, from: new Date(Date.now() - 60_000) });
    await expect(messages.next()).rejects.toMatchObject({
      code: 'history_refused',
      message: expect.stringMatching(/404: history_off/),
    });
  });
});
