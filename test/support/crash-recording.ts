/**
 * A simulator and relays in their own processes recording into one `--data-dir`, for tests of what a
 * SIGKILL leaves in the record (test/e2e/history/): each relay started on the same folder, every
 * one killed and the folder removed after the file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type SimulatorHandle, startSimulator } from '../../src/sim/server.ts';
import { type ChildRelay, startChildRelay } from './cluster/child-relay.ts';

/** The child relay's flush window (`HISTORY_FLUSH_MS` in vitest.config.ts): what a SIGKILL may lose. */
export const FLUSH_WINDOW_MS = 1_000;

export interface CrashRecording {
  sim(): SimulatorHandle;
  /** The relays started so far, oldest first. */
  readonly relays: readonly ChildRelay[];
  /** A relay recording a book polled every 50 ms into the file's folder. */
  recordingRelay(): Promise<ChildRelay>;
}

export function useCrashRecording(seed: number, folderPrefix: string): CrashRecording {
  let sim: SimulatorHandle;
  let dataDir: string;
  const relays: ChildRelay[] = [];
  beforeAll(async () => {
    sim = await startSimulator({ markets: 3, seed, tickMs: 50 });
    dataDir = mkdtempSync(path.join(tmpdir(), folderPrefix));
  });
  afterAll(async () => {
    for (const relay of relays) await relay.stop('SIGKILL');
    await sim?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    sim: () => sim,
    relays,
    async recordingRelay() {
      const relay = await startChildRelay([
        `--upstream=${sim.url}`,
        '--history=embedded',
        `--data-dir=${dataDir}`,
        '--book-poll-ms=50',
        '--log-level=warn',
      ]);
      relays.push(relay);
      return relay;
    },
  };
}
