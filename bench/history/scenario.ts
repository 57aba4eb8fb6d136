/**
 * @module bench/history/scenario
 * `npm run bench -- history` (issue 47, "Costs, measured side by side in one run"): what recording
 * costs a relay (./recording-arms.ts: CPU per message and event-loop p99, recording on against off,
 * alternated; the store's bytes over the JSON it recorded), and what reading the record back costs
 * (./read-back-arms.ts: replay at `"max"` of one hour of one busy book, `since` one hour back). The
 * recording arms record into `--history` (default the embedded store; a store URL such as
 * `postgres://…` where this build has that store, else its arms say "not available").
 */

import { historyStoreAvailable } from '../lib/history-config.ts';
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
  recording: RecordingResult | { store: string; available: false };
  readBack: ReadBackResult;
}

export async function runHistory(options: BenchOptions): Promise<HistoryResult> {
  const sim = await startSim(SIM_TICK_MS, SIM_MARKETS);
  try {
    const store = options.historyStore;
    const recording = historyStoreAvailable(store)
      ? await runRecordingArms(sim, store, options)
      : { store, available: false as const };
    if (!('windows' in recording))
      progress(`history: recording into ${store} is not available in this build`);
    const readBack = await runReadBackArms(sim, options);
    return { recording, readBack };
  } finally {
    await sim.child.stop();
  }
}

export function historyReport(result: HistoryResult): Report {
  const targets: Target[] = [];
  const parts = [
    `### History: the cost of remembering (${BUSY_BOOKS} busy books, prices and trades, polled every ${POLL_MS} ms)`,
  ];
  const { recording, readBack } = result;
  if ('windows' in recording) {
    parts.push(
      markdownTable(
        [
          'round',
          'recording',
          'messages/s',
          'relay CPU share',
          'CPU µs/message',
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
          fixed(window.loopDelayP99Ms, 2),
          fixed(window.loopDelayMaxMs, 1),
          window.recorded === undefined ? '' : String(window.recorded),
          window.lost === undefined ? '' : String(window.lost),
        ]),
      ),
      `Recording into ${recording.store}: relay CPU per message on/off ${fixed(recording.cpuRatio, 3)}x ` +
        `(rounds ${fixed(recording.cpuRatioRange[0], 3)} to ${fixed(recording.cpuRatioRange[1], 3)}), ` +
        `event-loop p99 ${signed(recording.loopDelayP99AddedMs)} ms. A window sees no checkpoint (DuckDB folds ` +
        `its log into the file every 16 MB of it, about once a minute at this rate, and each arm's relay is ` +
        `fresh): the checkpoints' CPU is in the store's CPU per row below, times the rows recorded per second.`,
    );
    targets.push(
      target('history: relay CPU per message, recording on/off', recording.cpuRatio, 1.05, 'x'),
      target('history: event-loop p99 added by recording', recording.loopDelayP99AddedMs, 1, 'ms'),
    );
    const bytes = recording.storeRatio;
    if (bytes !== undefined) {
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
    }
  } else {
    parts.push(
      `Recording into ${recording.store}: not available (this build's relay records into the embedded store only).`,
    );
  }
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

function target(name: string, value: number, limit: number, unit: string): Target {
  return { name, value, limit, unit, met: value <= limit };
}

function signed(value: number): string {
  return `${value >= 0 ? '+' : ''}${fixed(value, 2)}`;
}
