/**
 * `--record` holds streams with no client so that they are recorded: a named book and every
 * active market's price, polled and written to the store while nobody subscribes; the option reads
 * repeated flags and its env twin alike, and refuses what it cannot hold.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { streamKey } from '../../packages/protocol/src/channels/stream-key.ts';
import { ConfigError, parseCommandLine, type ServeConfig } from '../../src/config/config.ts';
import type { Relay } from '../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../src/sim/server.ts';
import { startHarnessRelay } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function serve(argv: string[], env: NodeJS.ProcessEnv = {}): ServeConfig {
  const command = parseCommandLine(['serve', ...argv], env);
  if (command.command !== 'serve') throw new Error('not serve');
  return command.config;
}

describe('the history options', () => {
  it('read durations and sizes with their units, and `off` records nothing', () => {
    expect(
      serve(['--history-retention', '90m', '--history-max-bytes', '512MiB', '--data-dir', '/d']).history,
    ).toEqual({
      store: 'embedded',
      dataDir: '/d',
      retentionMs: 90 * 60_000,
      maxBytes: 512 * 1024 ** 2,
      flushMs: 4_000,
    });
    expect(serve(['--history-flush-ms', '500']).history?.flushMs).toBe(500);
    expect(() => serve(['--history-flush-ms', '6000'])).toThrow(/history-flush-ms/);
    expect(serve([], { HISTORY_RETENTION: '7d' }).history?.retentionMs).toBe(7 * 86_400_000);
    expect(serve(['--history', 'off']).history).toBeUndefined();
  });

  it('takes a PostgreSQL URL as the shared store, from the flag or its env twin', () => {
    const url = 'postgres://relay:secret@db.internal:5432/market_relay';
    expect(serve(['--history', url, '--history-retention', '7d']).history).toEqual({
      store: 'postgres',
      url,
      retentionMs: 7 * 86_400_000,
      maxBytes: 1024 ** 3,
      flushMs: 4_000,
    });
    expect(serve([], { HISTORY: 'postgresql://db/history' }).history).toMatchObject({
      store: 'postgres',
      url: 'postgresql://db/history',
    });
  });

  it.each([
    ['history-retention', '24'],
    ['history-retention', '30s'],
    ['history-max-bytes', '1GB'],
    ['history-max-bytes', '1000'],
    ['history', 'mysql://db'],
    ['history', 'postgres://'],
  ])('refuses --%s %j with one line', (name, value) => {
    expect(() => serve([`--${name}`, value])).toThrow(
      new RegExp(`invalid --${name}: got "${value}", expected`),
    );
  });
});

describe('--record', () => {
  it('reads repeated flags and the comma-separated env twin as one list', () => {
    expect(serve(['--record', 'book:*', '--record', 'price:a,b']).record).toEqual([
      { channel: 'book', markets: ['*'] },
      { channel: 'price', markets: ['a', 'b'] },
    ]);
    expect(serve([], { RECORD: 'trades:*,book:x' }).record).toEqual([
      { channel: 'trades', markets: ['*'] },
      { channel: 'book', markets: ['x'] },
    ]);
    expect(serve([]).record).toBeUndefined();
  });

  it.each(['nochannel', 'nonsense:*', 'book:', 'rest:*', 'book:*,x'])('refuses %j with one line', (value) => {
    expect(() => serve(['--record', value])).toThrow(ConfigError);
    expect(() => serve(['--record', value])).toThrow(
      /invalid --record: got .*, expected <channel>:<ids or \*>/,
    );
  });

  it('records a named book and every active price with no client subscribed', async () => {
    const sim: SimulatorHandle = await startSimulator({ markets: 4, seed: 3, tickMs: 20 });
    const dataDir = mkdtempSync(path.join(tmpdir(), 'history-record-'));
    folders.push(dataDir);
    const [book] = sim.market.activeMarketIds();
    let relay: Relay | undefined;
    try {
      relay = await startHarnessRelay(sim, {
        history: { store: 'embedded', dataDir, retentionMs: 3_600_000, maxBytes: 1024 ** 3 },
        record: [
          { channel: 'book', markets: [book!] },
          { channel: 'price', markets: ['*'] },
        ],
      });
      const history = relay.history!;
      for (const key of [
        streamKey('book', book!, null),
        ...sim.market.activeMarketIds().map((id) => streamKey('price', id)),
      ])
        await waitFor(`${key} recorded`, async () => {
          await history.flush();
          return (await history.store.extent(key))?.rows;
        });
      // Held by the relay alone: no client, no subscription counted.
      expect(relay.ws.connections.size).toBe(0);
      expect([...relay.registry.streams()].every((stream) => stream.clientCount === 0)).toBe(true);
    } finally {
      await relay?.close();
      await sim.close();
    }
  });
});
