/**
 * @module bench/history/scenario
 * `npm run bench -- history` (issue 47, "Costs, measured side by side in one run"): what recording
 * costs a relay (./recording-arms.ts: CPU per message and event-loop p99, recording on against off,
 * alternated; the store's bytes over the JSON it recorded), and what reading the record back costs
 * (./read-back-arms.ts: replay at `"max"` of one hour of one busy book, `since` one hour back). The
 * recording arms record into the embedded store; with `--history postgres` (a private server
 * started for the run and removed after) or `--history postgres://…` (a server of yours), also into
 * the shared store, in the same rounds (issue 48: its cost within 1.2x of the embedded store's).
 */

import { type PostgresServer, startPostgres } from '../../test/support/postgres-server.ts';
import { isPostgresUrl } from '../lib/history-config.ts';
import type { BenchOptions } from '../lib/options.ts';
import { progress } from '../lib/progress.ts';
import { fixed, markdownTable, type Report, type Target } from '../lib/report.ts';
import { startSim } from '../lib/servers.ts';
import { type ReadBackResult, runReadBackArms } from './read-back-arms.ts';
import { BUSY_BOOKS, POLL_MS, type RecordingResult, runRecordingArms } from './recording-arms.ts';

/** The simulator moves every book more often than the relay polls it: every poll finds a change. */
const SIM_TICK_MS = 100;
const SIM_MARKETS = 80;

export interface HistoryResult {
  recording: RecordingResult;
  readBack: ReadBackResult;
}

export async function runHistory(options: BenchOptions): Promise<HistoryResult> {
  const store = options.historyStore;
  if (store !== 'embedded' && store !== 'postgres' && !isPostgresUrl(store))
    throw new Error(`--history ${store}: embedded, postgres (a private server) or a postgres:// URL`);
  let privateServer: PostgresServer | undefined;
  if (store === 'postgres') {
    progress('history: starting a private PostgreSQL server');
    privateServer = await startPostgres();
  }
  const postgresUrl = privateServer?.url ?? (isPostgresUrl(store) ? store : undefined);
  const sim = await startSim(SIM_TICK_MS, SIM_MARKETS);
  try {
    const recording = await runRecordingArms(sim, postgresUrl, options);
    const readBack = await runReadBackArms(sim, options);
    return { recording, readBack };
  } finally {
    await sim.child.stop();
    await privateServer?.remove();
  }
}

export function historyReport(result: HistoryResult): Report {
  const targets: Target[] = [];
  const parts = [
    `### History: the cost of remembering (${BUSY_BOOKS} busy books, prices and trades, polled every ${POLL_MS} ms)`,
  ];
  const { recording, readBack } = result;
  parts.push(...recordingReport(recording, targets));
  parts.push(
    `Seeded: ${readBack.seeded.messages} messages of one book (${readBack.seeded.stream}), one every ${POLL_MS} ms for an hour.`,
  );
  if (readBack.replay.available) {
    const replay = readBack.replay.result;
    parts.push(
      `Replay at "max": ${replay.messages} messages in ${fixed(replay.seconds, 2)} s, ${fixed(replay.messagesPerSec, 0)} messages/s ` +
        `to one client; the neighbour's live book's longest wait ${fixed(replay.neighbourDuringMs, 0)} ms ` +
        `against ${fixed(replay.neighbourBaselineMs, 0)} ms before it (limit ${fixed(replay.neighbourLimitMs, 0)} ms).`,
    );
    targets.push(
      target(
        'history: 20,000 messages/s over the replay rate at "max"',
        20_000 / replay.messagesPerSec,
        1,
        'x of 20k/s',
      ),
      target(
        'history: neighbour longest wait during replay',
        replay.neighbourDuringMs,
        replay.neighbourLimitMs,
        'ms',
      ),
    );
  } else parts.push(`Replay at "max": not available: ${readBack.replay.answer}.`);
  if (readBack.since.available) {
    const since = readBack.since.result;
    parts.push(
      `since one hour back: first message after ${fixed(since.firstMessageMs, 0)} ms, first live message after ` +
        `${fixed(since.firstLiveMs, 0)} ms, ${since.recordedMessages} recorded messages before it; history ${JSON.stringify(since.history)}.`,
    );
  } else parts.push(`since one hour back: not available: ${readBack.since.answer}.`);
  return { section: parts.join('\n\n'), targets };
}

function recordingReport(recording: RecordingResult, targets: Target[]): string[] {
  const parts = [
    markdownTable(
      [
        'round',
        'recording',
        'messages/s',
        'relay CPU share',
        'CPU µs/message',
        'engine CPU µs/message',
        'loop delay p99 ms',
        'max ms',
        'recorded',
        'lost',
      ],
      recording.windows.map((window) => [
        String(window.round),
        window.arm,
        fixed(window.messagesPerSec, 0),
        fixed(window.cpuShare, 3),
        fixed(window.cpuPerMessageUs, 1),
        window.engineCpuPerMessageUs === undefined ? '' : fixed(window.engineCpuPerMessageUs, 1),
        fixed(window.loopDelayP99Ms, 2),
        fixed(window.loopDelayMaxMs, 1),
        window.recorded === undefined ? '' : String(window.recorded),
        window.lost === undefined ? '' : String(window.lost),
      ]),
    ),
  ];
  const { embedded, postgres } = recording.figures;
  if (embedded !== undefined) {
    parts.push(
      `Recording into the embedded store: relay CPU per message on/off ${fixed(embedded.cpuRatio, 3)}x ` +
        `(rounds ${fixed(embedded.cpuRatioRange[0], 3)} to ${fixed(embedded.cpuRatioRange[1], 3)}; ` +
        `${signed(embedded.addedCpuUs)} µs a message), event-loop p99 ${signed(embedded.loopDelayP99AddedMs)} ms. ` +
        `Each window ends with the store's checkpoint of what it recorded (DuckDB folds its log into the file ` +
        `every 16 MB of it, about once a minute at this rate), counted in the window.`,
    );
    targets.push(
      target('history: relay CPU per message, recording on/off', embedded.cpuRatio, 1.05, 'x'),
      target('history: event-loop p99 added by recording', embedded.loopDelayP99AddedMs, 1, 'ms'),
    );
  }
  if (postgres !== undefined && recording.sharedOverEmbedded !== undefined) {
    const engine = recording.windows
      .map((window) => window.engineCpuPerMessageUs)
      .filter((value) => value !== undefined);
    parts.push(
      `Recording into the shared store (PostgreSQL at ${recording.postgres}, one relay recording what it serves, ` +
        `as the lease holder of every stream does in a cluster): relay CPU per message on/off ` +
        `${fixed(postgres.cpuRatio, 3)}x (rounds ${fixed(postgres.cpuRatioRange[0], 3)} to ` +
        `${fixed(postgres.cpuRatioRange[1], 3)}; ${signed(postgres.addedCpuUs)} µs a message), event-loop p99 ` +
        `${signed(postgres.loopDelayP99AddedMs)} ms. Its added relay CPU over the embedded store's: ` +
        `${fixed(recording.sharedOverEmbedded, 2)}x` +
        (Number.isNaN(recording.sharedOverEmbedded)
          ? " (the embedded store's added CPU is not above zero in this run: no ratio)"
          : '') +
        '. ' +
        (engine.length === 0
          ? 'The engine runs elsewhere: its own CPU is not measured.'
          : `The engine's own CPU, not the relay's and not in that ratio: ${engine.map((value) => fixed(value, 1)).join(', ')} µs a message.`),
    );
    targets.push(
      target(
        'history: relay CPU recording adds, shared store over embedded',
        recording.sharedOverEmbedded,
        1.2,
        'x',
      ),
    );
  }
  const bytes = recording.storeRatio;
  const channels = Object.entries(bytes.byChannel)
    .map(([channel, { rows, jsonBytes }]) => `${channel} ${rows} (${fixed(jsonBytes / 1e6, 2)} MB)`)
    .join(', ');
  parts.push(
    `Store: ${bytes.rows} messages recorded (${channels}), ${fixed(bytes.jsonBytes / 1e6, 2)} MB of JSON; ` +
      `${fixed(bytes.storedBytes / 1e6, 2)} MB on disk once closed, ${fixed(bytes.ratio, 3)}x, file and log counted ` +
      `(${fixed(bytes.runningRatio, 3)}x while the last recording relay ran, its log not yet folded in). ` +
      `The same messages appended ${fixed(bytes.steady.jsonBytes / bytes.jsonBytes, 0)} times into a new store ` +
      `(${bytes.steady.rows} rows, ${fixed(bytes.steady.jsonBytes / 1e6, 1)} MB of JSON, ${fixed(bytes.steady.usPerRow, 1)} µs a row, ` +
      `${fixed(bytes.steady.cpuUsPerRow, 1)} µs of CPU a row with its checkpoints): ` +
      `${fixed(bytes.steady.storedBytes / 1e6, 2)} MB once closed, ${fixed(bytes.steady.ratio, 3)}x ` +
      `(${fixed(bytes.steady.openRatio, 3)}x while open).`,
  );
  targets.push(
    target(
      'history: stored bytes / JSON bytes (its messages appended again, steady state)',
      bytes.steady.ratio,
      0.2,
      'x',
    ),
  );
  return parts;
}

function target(name: string, value: number, limit: number, unit: string): Target {
  return { name, value, limit, unit, met: value <= limit };
}

function signed(value: number): string {
  return `${value >= 0 ? '+' : ''}${fixed(value, 2)}`;
}
