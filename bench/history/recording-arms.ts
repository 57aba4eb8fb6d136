/**
 * @module bench/history/recording-arms
 * Recording off against on, side by side: relays polling 50 busy books every 250 ms (the simulator
 * moves every book on every tick) plus their prices and trades, for one client subscribed to all of
 * them. Each round runs every arm at once (./arm-figures.ts): off, recording into the embedded
 * store, and (given a PostgreSQL server) recording into the shared store, each a relay of its own
 * with a client of its own, started fresh, warmed up, then all measured over the same window: its CPU
 * (process.cpuUsage, all of its threads, DuckDB's included) per stream message delivered, its event
 * loop's delay p99, and for the shared store the engine's own CPU over the window where it runs on
 * this machine (./engine-cpu.ts). The relays of an arm share one store (one data folder, one
 * database), so it grows over the run as a relay's would; after the last embedded one closed, its
 * bytes (file and log) over the JSON of everything it recorded. That store is small (a minute or
 * two of messages), where DuckDB's fixed costs (its header, partly filled blocks) weigh; so its
 * messages are also appended again into a new store, by the store's own `append` a batch per
 * second, until they make {@link STEADY_JSON_BYTES} of JSON: the ratio a relay's store settles at.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BenchOptions } from '../lib/options.ts';
import { progress, sleep } from '../lib/progress.ts';
import { profileFlags, SHIPPED_RELAY_NODE_FLAGS, type Simulator, startServer } from '../lib/servers.ts';
import { type UsageSample, usageBetween } from '../lib/usage.ts';
import {
  type Arm,
  armOrder,
  type RecordingArm,
  type StoreFigures,
  sharedOverEmbedded,
  storeFigures,
  wholeOrderSets,
} from './arm-figures.ts';
import { engineCpuUs } from './engine-cpu.ts';
import { copyStore, recordedJson, storeFileBytes } from './store-bytes.ts';
import { WireClient } from './wire-client.ts';

export const BUSY_BOOKS = 50;
export const POLL_MS = 250;
/** Enough for 50 books, their prices and trades every 250 ms with room to spare. */
const UPSTREAM_RPS = 2_000;

/** JSON of the copied store (bytes): 64 MB, 24 MB with --quick. */
const STEADY_JSON_BYTES = { full: 64e6, quick: 24e6 };

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
  /** Recording: messages the recorder wrote, and lost (dropped or in failed writes). */
  recorded?: number;
  lost?: number;
  /** Embedded: the store's files while the relay ran, just after a flush (bytes). */
  storeBytesRunning?: number;
  /** Postgres, where the engine runs on this machine: its CPU over the window per message (µs). */
  engineCpuPerMessageUs?: number;
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
  /** The shared store's server (its URL, password masked); undefined when only the embedded store ran. */
  postgres: string | undefined;
  windows: ArmWindow[];
  /** Each recording arm against the `off` arms of the same rounds. */
  figures: Partial<Record<RecordingArm, StoreFigures>>;
  /** The shared store's added relay CPU per message over the embedded store's (issue 48: at most 1.2x). */
  sharedOverEmbedded: number | undefined;
  /** The embedded store's bytes over the JSON it holds. */
  storeRatio: StoreRatio;
}

/** `postgresUrl`: also record into the shared store on that server, in the same rounds. */
export async function runRecordingArms(
  sim: Simulator,
  postgresUrl: string | undefined,
  options: BenchOptions,
): Promise<RecordingResult> {
  const markets = sim.markets.slice(0, BUSY_BOOKS);
  if (markets.length < BUSY_BOOKS)
    throw new Error(`the simulator has ${markets.length} busy markets, not ${BUSY_BOOKS}`);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-history-'));
  const arms: Arm[] = postgresUrl === undefined ? ['off', 'embedded'] : ['off', 'embedded', 'postgres'];
  const rounds = wholeOrderSets(options.historyRounds ?? (options.quick ? 2 : 4), arms.length);
  const windows: ArmWindow[] = [];
  try {
    for (let round = 1; round <= rounds; round += 1) {
      progress(
        `history: recording off and ${arms.slice(1).join(' and ')} side by side, round ${round} of ${rounds}`,
      );
      windows.push(
        ...(await measureRound(
          sim,
          markets,
          armOrder(arms, round),
          { round, dataDir, postgresUrl },
          options,
        )),
      );
    }
    const storeRatio = await embeddedRatio(
      dataDir,
      windows,
      options.quick ? STEADY_JSON_BYTES.quick : STEADY_JSON_BYTES.full,
    );
    const figures = storeFigures(windows);
    return {
      postgres: postgresUrl === undefined ? undefined : masked(postgresUrl),
      windows,
      figures,
      sharedOverEmbedded: sharedOverEmbedded(figures),
      storeRatio,
    };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

interface RunningArm {
  arm: Arm;
  relay: Awaited<ReturnType<typeof startServer>>;
  client: WireClient;
  enginePort: number | undefined;
  recording: boolean;
}

/**
 * One round: a relay of each arm, all started, subscribed and warmed up together, then measured
 * over the same window, so that whatever else the machine does in that window weighs on every arm
 * alike (arms run one after another drifted by a third within an hour: the figures compared
 * windows of different machines).
 */
async function measureRound(
  sim: Simulator,
  markets: readonly string[],
  order: readonly Arm[],
  round: { round: number; dataDir: string; postgresUrl: string | undefined },
  options: BenchOptions,
): Promise<ArmWindow[]> {
  const running: RunningArm[] = [];
  try {
    for (const arm of order) running.push(await startArm(sim, markets, arm, round, options));
    await sleep(options.warmupMs);
    // The warm-up's record folded into the store first, so that the checkpoint ending the window
    // (below) is that of the window's own messages: its CPU counted in the window, as DuckDB pays
    // it about once a minute for a relay recording this much.
    for (const { relay } of running) await relay.child.request('checkpoint');
    for (const { relay, client } of running) {
      await relay.child.request('resetLoopDelay');
      client.resetCounts();
    }
    const starts = [];
    for (const { relay, enginePort } of running)
      starts.push({
        usage: await relay.child.request<UsageSample>('usage'),
        engine: enginePort === undefined ? undefined : engineCpuUs(enginePort),
      });
    await sleep(options.historyWindowMs);
    const windows: ArmWindow[] = [];
    for (const [index, { arm, relay, client, enginePort, recording }] of running.entries()) {
      await relay.child.request('checkpoint');
      const end = await relay.child.request<UsageSample>('usage');
      const engineEnd = enginePort === undefined ? undefined : engineCpuUs(enginePort);
      const messages = client.streamMessages;
      const delay = await relay.child.request<{ p99Ms: number; maxMs: number }>('loopDelay');
      const start = starts[index];
      if (start === undefined) throw new Error('an arm without its start');
      const usage = usageBetween(start.usage, end);
      const window: ArmWindow = {
        arm,
        round: round.round,
        messages,
        messagesPerSec: (messages * 1000) / usage.wallMs,
        cpuUs: usage.cpuUs,
        cpuPerMessageUs: usage.cpuUs / Math.max(1, messages),
        cpuShare: usage.cpuShare,
        loopDelayP99Ms: delay.p99Ms,
        loopDelayMaxMs: delay.maxMs,
      };
      // One engine serves the one shared-store arm: its CPU over the window is that arm's.
      if (start.engine !== undefined && engineEnd !== undefined)
        window.engineCpuPerMessageUs = (engineEnd - start.engine) / Math.max(1, messages);
      if (recording) {
        const written = await relay.child.request<{ written: number; dropped: number } | undefined>(
          'history',
        );
        window.recorded = written?.written ?? 0;
        window.lost = written?.dropped ?? 0;
        if (arm === 'embedded') window.storeBytesRunning = storeFileBytes(round.dataDir);
      }
      windows.push(window);
    }
    return windows;
  } finally {
    for (const { relay, client } of running) {
      client.close();
      await relay.child.stop();
    }
  }
}

async function startArm(
  sim: Simulator,
  markets: readonly string[],
  arm: Arm,
  round: { round: number; dataDir: string; postgresUrl: string | undefined },
  options: BenchOptions,
): Promise<RunningArm> {
  const store = arm === 'postgres' ? round.postgresUrl : arm === 'embedded' ? 'embedded' : undefined;
  const relay = await startServer('relay', {
    upstream: sim.url,
    pollMs: POLL_MS,
    upstreamRps: UPSTREAM_RPS,
    nodeFlags: [
      ...SHIPPED_RELAY_NODE_FLAGS,
      ...(options.cpuProf ? profileFlags(`history-${arm}-${round.round}`) : []),
    ],
    ...(store === undefined ? {} : { history: { store, dataDir: round.dataDir } }),
  });
  const client = await WireClient.connect(relay.url);
  for (const channel of ['book', 'price', 'trades']) {
    const id = `subscribe-${channel}`;
    client.send({ op: 'subscribe', id, channel, markets, ...(channel === 'book' ? { depth: 10 } : {}) });
    const reply = await client.reply(id);
    if (reply.type !== 'subscribed') throw new Error(`subscribe ${channel}: ${JSON.stringify(reply)}`);
  }
  const enginePort = arm === 'postgres' && store !== undefined ? portOf(store) : undefined;
  return { arm, relay, client, enginePort, recording: store !== undefined };
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
  const recordedByThen = windows
    .filter((window) => window.arm === 'embedded')
    .reduce((sum, window) => sum + (window.recorded ?? 0), 0);
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

/** The server's port, read from its URL (5432 when it names none). */
function portOf(url: string): number {
  return Number(new URL(url).port || 5432);
}

/** The URL with its password masked, for the report. */
function masked(url: string): string {
  const parsed = new URL(url);
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}
