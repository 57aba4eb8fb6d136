/**
 * @module bench/lib/history-config
 * The store a bench relay records into, from what the history scenario passes its child: unset,
 * nothing (every other scenario's relay records nothing, so their baselines stay comparable);
 * `embedded`, the embedded store in the data folder given; a `postgres://…` URL, the shared store
 * a cluster records into.
 */
import type { HistoryConfig } from '../../src/config/history-options.ts';

/** Kept longer than the seeded hour of the replay and `since` arms, so that nothing of it is dropped. */
const RETENTION_MS = 24 * 3_600_000;
const MAX_BYTES = 4 * 1024 ** 3;
const POSTGRES_URL = /^postgres(ql)?:\/\/\S+$/;

export function benchHistoryConfig(
  store: string | undefined,
  dataDir: string | undefined,
): HistoryConfig | undefined {
  if (store === undefined || store === '') return undefined;
  const limits = { retentionMs: RETENTION_MS, maxBytes: MAX_BYTES };
  if (POSTGRES_URL.test(store)) return { store: 'postgres', url: store, ...limits };
  if (store !== 'embedded')
    throw new Error(`--history ${store}: the bench records into embedded or a postgres:// URL`);
  if (dataDir === undefined) throw new Error('the embedded store needs a data folder');
  return { store: 'embedded', dataDir, ...limits };
}

/** Whether `store` names a PostgreSQL server's URL. */
export function isPostgresUrl(store: string): boolean {
  return POSTGRES_URL.test(store);
}
