/**
 * @module bench/history/recording-arms
 * Recording on against off, side by side: relays polling 50 busy books every 250 ms (the simulator
 * moves every book on every tick) plus their prices and trades, for one client subscribed to all of
 * them. The arms alternate, off then on, then on then off (so that a drift of the machine's load
 * over the run falls on both alike), each a relay of its own started fresh, warmed up, then
 * measured over one window: its CPU (process.cpuUsage, all of its threads, DuckDB's included) per
 * stream message delivered, and its event loop's delay p99. The recording relays share one data
 * folder, so the store grows over the run as a relay's would; after the last one closed, its bytes
 * (file and log) over the JSON of everything it recorded. That store is small (a minute or two of
 * messages), where DuckDB's fixed costs (its header, partly filled blocks) weigh; so its messages
 * are also appended again into a new store, by the store's own `append` a batch per second, until
 * they make {@link STEADY_JSON_BYTES} of JSON: the ratio a relay's store settles at.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BenchOptions } from '../lib/options.ts';
import { progress, sleep } from '../lib/progress.ts';
import { profileFlags, SHIPPED_RELAY_NODE_FLAGS, type Simulator, startServer } from '../lib/servers.ts';
import { type UsageSample, usageBetween } from '../lib/usage.ts';
import { copyStore, recordedJson, storeFileBytes } from './store-bytes.ts';
import { WireClient } from './wire-client.ts';

export const BUSY_BOOKS = 50;
export const POLL_MS = 250;
/** Enough for 50 books, their prices and trades every 250 ms with room to spare. */
const UPSTREAM_RPS = 2_000;

/** JSON of the copied store (bytes): 64 MB, 24 MB with --quick. */
const STEADY_JSON_BYTES = { full: 64e6, quick: 24e6 };

export type Arm = 'off' | 'on';

export interface ArmWindow {
  arm: Arm;
  round: number;
  messages: number;
  messagesPerSec: number;
  cpuUs: number;
  cpuPerMessageUs: number;
  cpuShare: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  /** On: messages the recorder wrote, and lost (dropped or in failed writes). */
  recorded?: number;
  lost?: number;
  /** On: the store's files while the relay ran, just after a flush (bytes). */
  storeBytesRunning?: number;
}

export interface StoreRatio {
  rows: number;
  jsonBytes: number;
  /** After the last recording relay closed the store (its checkpoint). */
  storedBytes: number;
  ratio: number;
  /** While the last recording relay ran (the log not yet folded in) over the JSON recorded by then. */
  runningRatio: number;
  byChannel: Record<string, { rows: number; jsonBytes: number }>;
  /** The same messages appended again until they make STEADY_JSON_BYTES of JSON. */
  steady: {
    rows: number;
    jsonBytes: number;
    storedBytes: number;
    ratio: number;
    openRatio: number;
    usPerRow: number;
    /** CPU per row appended, its share of the checkpoints included (µs). */
    cpuUsPerRow: number;
  };
}

export interface RecordingResult {
  store: string;
  windows: ArmWindow[];
  /** Relay CPU per message, on over off: the median of the rounds' paired ratios, and their range. */
  cpuRatio: number;
  cpuRatioRange: [number, number];
  /** Event-loop p99, on minus off (ms): the median of the rounds' paired differences. */
  loopDelayP99AddedMs: number;
  /** Undefined where the store is not the embedded one (its bytes are the engine's to say). */
  storeRatio: StoreRatio | undefined;
}

export async function runRecordingArms(
  sim: Simulator,
  store: string,
  options: BenchOptions,
): Promise<RecordingResult> {
  const markets = sim.markets.slice(0, BUSY_BOOKS);
  if (markets.length < BUSY_BOOKS)
    throw new Error(`the simulator has ${markets.length} busy markets, not ${BUSY_BOOKS}`);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-history-'));
  const rounds = options.quick ? 2 : 3;
  const windows: ArmWindow[] = [];
  try {
    for (let round = 1; round <= rounds; round += 1) {
      const order: Arm[] = round % 2 === 1 ? ['off', 'on'] : ['on', 'off'];
      for (const arm of order) {
        progress(`history: recording ${arm}, round ${round} of ${rounds}`);
        windows.push(await measureArm(sim, markets, { arm, round, store, dataDir }, options));
      }
    }
    const storeRatio =
      store === 'embedded'
        ? await embeddedRatio(
            dataDir,
            windows,
            options.quick ? STEADY_JSON_BYTES.quick : STEADY_JSON_BYTES.full,
          )
        : undefined;
    return { store, windows, ...pairedFigures(windows), storeRatio };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function measureArm(
  sim: Simulator,
  markets: readonly string[],
  arm: { arm: Arm; round: number; store: string; dataDir: string },
  options: BenchOptions,
): Promise<ArmWindow> {
  const relay = await startServer('relay', {
    upstream: sim.url,
    pollMs: POLL_MS,
    upstreamRps: UPSTREAM_RPS,
    nodeFlags: [
      ...SHIPPED_RELAY_NODE_FLAGS,
      ...(options.cpuProf ? profileFlags(`history-${arm.arm}-${arm.round}`) : []),
    ],
    ...(arm.arm === 'on' ? { history: { store: arm.store, dataDir: arm.dataDir } } : {}),
  });
  const client = await WireClient.connect(relay.url);
  try {
    for (const channel of ['book', 'price', 'trades']) {
      const id = `subscribe-${channel}`;
      client.send({ op: 'subscribe', id, channel, markets, ...(channel === 'book' ? { depth: 10 } : {}) });
      const reply = await client.reply(id);
      if (reply.type !== 'subscribed') throw new Error(`subscribe ${channel}: ${JSON.stringify(reply)}`);
    }
    await sleep(options.warmupMs);
    await relay.child.request('resetLoopDelay');
    client.resetCounts();
    const start = await relay.child.request<UsageSample>('usage');
    await sleep(options.windowMs);
    const end = await relay.child.request<UsageSample>('usage');
    const messages = client.streamMessages;
    const delay = await relay.child.request<{ p99Ms: number; maxMs: number }>('loopDelay');
    const usage = usageBetween(start, end);
    const window: ArmWindow = {
      arm: arm.arm,
      round: arm.round,
      messages,
      messagesPerSec: (messages * 1000) / usage.wallMs,
      cpuUs: usage.cpuUs,
      cpuPerMessageUs: usage.cpuUs / Math.max(1, messages),
      cpuShare: usage.cpuShare,
      loopDelayP99Ms: delay.p99Ms,
      loopDelayMaxMs: delay.maxMs,
    };
    if (arm.arm === 'on') {
      const written = await relay.child.request<{ written: number; dropped: number } | undefined>('history');
      window.recorded = written?.written ?? 0;
      window.lost = written?.dropped ?? 0;
      window.storeBytesRunning = storeFileBytes(arm.dataDir);
    }
    return window;
  } finally {
    client.close();
    await relay.child.stop();
  }
}

function pairedFigures(
  windows: readonly ArmWindow[],
): Omit<RecordingResult, 'store' | 'windows' | 'storeRatio'> {
  const ratios: number[] = [];
  const added: number[] = [];
  for (const round of new Set(windows.map((window) => window.round))) {
    const off = windows.find((window) => window.round === round && window.arm === 'off');
    const on = windows.find((window) => window.round === round && window.arm === 'on');
    if (off === undefined || on === undefined) continue;
    ratios.push(on.cpuPerMessageUs / off.cpuPerMessageUs);
    added.push(on.loopDelayP99Ms - off.loopDelayP99Ms);
  }
  return {
    cpuRatio: median(ratios),
    cpuRatioRange: [Math.min(...ratios), Math.max(...ratios)],
    loopDelayP99AddedMs: median(added),
  };
}

async function embeddedRatio(
  dataDir: string,
  windows: readonly ArmWindow[],
  steadyJsonBytes: number,
): Promise<StoreRatio> {
  const json = await recordedJson(dataDir);
  const storedBytes = storeFileBytes(dataDir);
  const repeat = Math.max(1, Math.ceil(steadyJsonBytes / Math.max(1, json.jsonBytes)));
  progress(`history: the recorded messages appended ${repeat} times into a new store`);
  const copyDir = `${dataDir}-copy`;
  let steady: StoreRatio['steady'];
  try {
    const copy = await copyStore(dataDir, copyDir, repeat);
    const copiedJson = json.jsonBytes * repeat;
    const copiedBytes = storeFileBytes(copyDir);
    steady = {
      rows: copy.rows,
      jsonBytes: copiedJson,
      storedBytes: copiedBytes,
      ratio: copiedBytes / copiedJson,
      openRatio: copy.openBytes / copiedJson,
      usPerRow: (copy.ms * 1000) / copy.rows,
      cpuUsPerRow: copy.cpuUs / copy.rows,
    };
  } finally {
    rmSync(copyDir, { recursive: true, force: true });
  }
  const recordedByThen = windows.reduce((sum, window) => sum + (window.recorded ?? 0), 0);
  const running =
    windows.findLast((window) => window.storeBytesRunning !== undefined)?.storeBytesRunning ?? 0;
  // The JSON recorded until the last relay's window ended: the messages' mean size times their count.
  const jsonByThen = (json.jsonBytes / Math.max(1, json.rows)) * Math.min(recordedByThen, json.rows);
  return {
    rows: json.rows,
    jsonBytes: json.jsonBytes,
    storedBytes,
    ratio: storedBytes / json.jsonBytes,
    runningRatio: running / Math.max(1, jsonByThen),
    byChannel: json.byChannel,
    steady,
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}
