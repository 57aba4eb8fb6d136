/**
 * A relay whose embedded store's disk fills up while it serves (docs/history.md "When the store
 * cannot write"): live serving goes on, `/health` says `writing: false` with the error, the metrics
 * the MarketRelayHistoryNotRecording alert reads (deploy/prometheus) say so, and when space returns
 * recording resumes by itself; what was not written is a hole a replay marks with a `replay_gap`,
 * never a silent one. Runs on a small tmpfs mounted for the test (root only); where mounting is not
 * permitted it is skipped with a line saying so.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Relay } from '../../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import { startRecordingRelay, TextClient } from '../../support/replay-client.ts';
import { waitFor } from '../../support/wait-for.ts';

const mountPoint = mkdtempSync(path.join(tmpdir(), 'history-relay-full-'));
const mounted = tryMount(mountPoint);
if (!mounted)
  console.log(
    'full-disk relay test skipped: mounting an 8 MiB tmpfs needs root (mount -t tmpfs); run the suite as root to include it',
  );

let sim: SimulatorHandle | undefined;
let relay: Relay | undefined;
const clients: TextClient[] = [];

afterAll(async () => {
  for (const client of clients) client.close();
  await relay?.close();
  await sim?.close();
  if (mounted) execFileSync('umount', [mountPoint]);
  rmSync(mountPoint, { recursive: true, force: true });
});

function tryMount(target: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', target], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

interface History {
  writing: boolean;
  lastError: string | null;
  writeFailures: number;
  dropped: number;
}

async function history(at: Relay): Promise<History> {
  const body = (await (await fetch(`${at.url}/health`)).json()) as { history: History };
  return body.history;
}

async function metric(at: Relay, name: string): Promise<number> {
  const text = await (await fetch(`${at.operatorUrl ?? at.url}/metrics`)).text();
  const match = new RegExp(`^market_relay_${name} (\\S+)$`, 'm').exec(text);
  if (match === null) throw new Error(`no ${name} in the scrape`);
  return Number(match[1]);
}

describe.skipIf(!mounted)('a relay whose history disk fills up', () => {
  it('serves on, says so on /health and in the metrics, records again when space returns, the hole marked', async () => {
    sim = await startSimulator({ markets: 2, seed: 31, tickMs: 10 });
    relay = await startRecordingRelay(sim, path.join(mountPoint, 'data'), {
      history: {
        store: 'embedded',
        dataDir: path.join(mountPoint, 'data'),
        retentionMs: 3_600_000,
        maxBytes: 1024 ** 3,
        flushMs: 100,
      },
    });
    const [market] = sim.market.activeMarketIds();
    const from = new Date(Date.now() - 1).toISOString();
    const live = await TextClient.connect(relay);
    clients.push(live);
    live.send({ op: 'subscribe', id: 'live', channel: 'book', markets: [market] });
    await waitFor('a changing book', () => live.stream().length >= 10);
    await waitFor(
      'its first writes',
      async () => (await metric(relay!, 'history_messages_recorded_total')) > 0,
    );
    expect(await history(relay)).toMatchObject({ writing: true, writeFailures: 0, dropped: 0 });

    const filler = path.join(mountPoint, 'filler');
    try {
      writeFileSync(filler, Buffer.alloc(16 * 1024 ** 2));
    } catch {
      // The filler takes every byte it can get: the disk is full now.
    }
    const full = await waitFor('/health to say writes fail', async () => {
      const now = await history(relay!);
      return !now.writing && now;
    });
    expect(full.lastError).toMatch(/space/i);
    // What the alert reads: the failing write, and messages dropped unrecorded.
    expect(await metric(relay, 'history_write_failing')).toBe(1);
    await waitFor(
      'dropped messages counted',
      async () => (await metric(relay!, 'history_messages_dropped_total')) > 0,
    );
    // Live serving goes on.
    const during = live.stream().length;
    await waitFor('updates while the disk is full', () => live.stream().length >= during + 10);

    rmSync(filler);
    await waitFor('/health to say it writes again', async () => (await history(relay!)).writing);
    expect(await metric(relay, 'history_write_failing')).toBe(0);
    const resumed = live.stream().length;
    await waitFor('updates after space returned', () => live.stream().length >= resumed + 10);

    // The record: what was written before and after, each as sent, and the hole between them marked.
    const sent = live.stream();
    const to = new Date(Date.parse(sent.at(-1)!.message.rts as string) + 1).toISOString();
    live.send({ op: 'replay', id: 'r', channel: 'book', markets: [market], from, to, speed: 'max' });
    await live.answer('replayed', 'r');
    const replayed = live.stream('r').map(({ message: { replay: _id, ...message } }) => message);
    const bySeq = new Map(sent.map(({ message }) => [message.seq as number, message]));
    for (const message of replayed) expect(message).toEqual(bySeq.get(message.seq as number));
    const seqs = replayed.map((message) => message.seq as number);
    expect(seqs.at(-1)).toBe(sent.at(-1)!.message.seq);
    const holes = seqs.filter((seq, i) => i > 0 && seq !== seqs[i - 1]! + 1).length;
    expect(holes).toBeGreaterThanOrEqual(1);
    const gaps = live.of('replay_gap', 'r').map(({ message }) => message);
    // One gap before the stream's first snapshot, then one (no reason: a seq skipped) per hole.
    expect(gaps).toHaveLength(1 + holes);
    expect(gaps.slice(1).every((gap) => gap.reason === undefined)).toBe(true);
  });
});
