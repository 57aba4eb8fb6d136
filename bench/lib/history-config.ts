/**
 * @module bench/lib/history-config
 * The store a bench relay records into, from what the history scenario passes its child: unset,
 * nothing (every other scenario's relay records nothing, so their baselines stay comparable);
 * `embedded`, the embedded store in the data folder given; a store URL (`postgres://…`), the shared
 * store a cluster would use, where this build's relay has one.
 */
import type { HistoryConfig } from '../../src/config/history-options.ts';

/** Kept longer than the seeded hour of the replay and `since` arms, so that nothing of it is dropped. */
const RETENTION_MS = 24 * 3_600_000;
const MAX_BYTES = 4 * 1024 ** 3;

export function benchHistoryConfig(
  store: string | undefined,
  dataDir: string | undefined,
): HistoryConfig | undefined {
  if (store === undefined || store === '') return undefined;
  if (store !== 'embedded')
    throw new UnsupportedHistoryStore(`--history ${store}: this build records into the embedded store only`);
  if (dataDir === undefined) throw new Error('the embedded store needs a data folder');
  return { store: 'embedded', dataDir, retentionMs: RETENTION_MS, maxBytes: MAX_BYTES };
}

/** The store asked for is not one this build has (a relay child exits with it; the arm says so). */
export class UnsupportedHistoryStore extends Error {
  override name = 'UnsupportedHistoryStore';
}

/** Whether this build's relay can record into `store` (the scenario asks before it starts an arm). */
export function historyStoreAvailable(store: string): boolean {
  try {
    benchHistoryConfig(store, 'unused');
    return true;
  } catch (error) {
    if (error instanceof UnsupportedHistoryStore) return false;
    throw error;
  }
}
