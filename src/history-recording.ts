/**
 * @module history-recording
 * The record of what `serve` sends (docs/history.md), wired once: the store `--history` names (the
 * embedded DuckDB store in `--data-dir`, or the shared PostgreSQL store at a URL), the recorder that
 * buffers each numbered message and writes it every flush window, and where messages are taken
 * from: as each is served here (a relay alone, or each relay of a cluster into its own store), or,
 * in a cluster sharing one store, as the lease holder numbers it for all (`book`, `price`), and as
 * the holder of a stream's recording lease serves it (the streams each relay numbers itself;
 * docs/cluster.md "One history for the cluster"). A store that cannot be opened stops the start with one clear line;
 * once serving, a failing store never stops anything else.
 */
import type { Logger } from 'pino';
import { DEFAULT_HISTORY_FLUSH_MS, type HistoryConfig } from './config/history-options.ts';
import { openDuckDbStore } from './history/duckdb-store.ts';
import { openPostgresStore } from './history/postgres-store.ts';
import { HistoryRecorder } from './history/recorder.ts';
import { SentArena, type SentBytes } from './history/sent-arena.ts';
import type { HistoryStore } from './history/store.ts';
import type { LeaseTable } from './relay/coordination/recording/lease-table.ts';
import { type LeasedRecordSink, StreamRecording } from './relay/coordination/recording/stream-recording.ts';
import type { NumberedRecordSink } from './relay/coordination/stream-numbering.ts';
import type { Frame } from './relay/streams/frame.ts';
import type { RecordSink } from './relay/streams/publisher.ts';
import { type RecordedSubject, recordedOf } from './relay/streams/recorded.ts';
import type { AnyStream } from './relay/streams/stream.ts';

/** Retention by age and size is enforced this often. */
const RETENTION_EVERY_MS = 60_000;
type SentFrame = Pick<Frame, 'bytes' | 'position'>;

/** What the store holds is read again this often for /health and /metrics. */
const STATS_EVERY_MS = 5_000;
/** Messages waiting for a write at most (about a minute of 50 busy books); past it they are dropped and counted. */
const MAX_PENDING = 200_000;

export interface HistoryRecording {
  recorder: HistoryRecorder<SentBytes<RecordedSubject>>;
  /** What the publisher tells of each message it sends; undefined when the cluster's holders record instead. */
  served: RecordSink | undefined;
  /** What a lease holder tells of each message it numbers for the cluster; undefined when each relay records what it serves. */
  numbered: NumberedRecordSink | undefined;
  /**
   * In a cluster sharing the store: what the holder of a stream's recording lease records of the
   * streams each relay numbers itself (relay/coordination/recording/stream-recording.ts).
   */
  leased: LeasedRecordSink | undefined;
}

/**
 * Opens the store and starts the recorder; undefined when `config` is (`--history off`). `cluster`:
 * this relay is one of a cluster (`--redis`), whose relays share the store when it is PostgreSQL.
 */
export async function startHistoryRecording(
  config: HistoryConfig | undefined,
  cluster: boolean,
  logger: Logger,
): Promise<HistoryRecording | undefined> {
  if (config === undefined) return undefined;
  const log = logger.child({ component: 'history' });
  const store: HistoryStore =
    config.store === 'postgres' ? await openPostgresStore(config.url) : await openDuckDbStore(config.dataDir);
  const recorder = new HistoryRecorder<SentBytes<RecordedSubject>>({
    store,
    buffer: new SentArena<RecordedSubject>(recordedOf),
    flushMs: config.flushMs ?? DEFAULT_HISTORY_FLUSH_MS,
    retention: { maxAgeMs: config.retentionMs, maxBytes: config.maxBytes },
    retentionMs: RETENTION_EVERY_MS,
    maxPending: MAX_PENDING,
    statsMs: STATS_EVERY_MS,
    onWriteState: (failing, error) =>
      failing
        ? log.error(
            { event: 'history_write_failed', err: error instanceof Error ? error.message : String(error) },
            'history store write failed: live serving goes on, this batch is not recorded; retrying every flush',
          )
        : log.info({ event: 'history_write_recovered' }, 'history store writes again'),
  });
  recorder.start();
  log.info({ event: 'history_recording', store: store.description }, `recording into ${store.description}`);
  const record = (subject: RecordedSubject, frame: SentFrame, kind: 'snapshot' | 'update') =>
    recorder.record({ subject, bytes: frame.bytes, position: frame.position, kind });
  if (!cluster || config.store !== 'postgres')
    return { recorder, served: record, numbered: undefined, leased: undefined };
  log.info(
    { event: 'history_shared' },
    'cluster history: this relay records the book and price streams whose lease it holds, and the streams each relay numbers itself whose recording lease it holds',
  );
  // A lease holder's snapshot starts an epoch of the cluster's stream: the Redis log a next holder
  // reads back after a SIGKILL holds only updates, so the snapshot is written at once, not a flush
  // window later, or the record of that epoch could hold no state to start from.
  const numbered = (subject: RecordedSubject, frame: SentFrame, kind: 'snapshot' | 'update') => {
    record(subject, frame, kind);
    if (kind === 'snapshot') recorder.flushSoon();
  };
  return { recorder, served: undefined, numbered, leased: record };
}

/**
 * In a cluster sharing the store, the recording leases of the streams this relay numbers itself
 * (`holds`: it still serves the stream); undefined where every message served here is recorded, or
 * nothing is.
 */
export function leasedRecording(
  history: HistoryRecording | undefined,
  leases: LeaseTable | undefined,
  holds: (stream: AnyStream) => boolean,
): StreamRecording | undefined {
  if (history?.leased === undefined || leases === undefined) return undefined;
  return new StreamRecording({ table: leases, record: history.leased, holds });
}
