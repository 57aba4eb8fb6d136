/**
 * @module history-recording
 * The record of what `serve` sends (docs/history.md), wired once: the store `--history` names (the
 * embedded DuckDB store in `--data-dir`), the recorder that buffers each numbered message and
 * writes it every flush window, and the sink the publisher tells of each message. A store that
 * cannot be opened stops the start with one clear line; once serving, a failing store never stops
 * anything else.
 */
import type { Logger } from 'pino';
import type { HistoryConfig } from './config/history-options.ts';
import { openDuckDbStore } from './history/duckdb-store.ts';
import { HistoryRecorder } from './history/recorder.ts';
import type { Frame } from './relay/streams/frame.ts';
import type { RecordSink } from './relay/streams/publisher.ts';
import { recordedOf } from './relay/streams/recorded.ts';
import type { AnyStream } from './relay/streams/stream.ts';

/**
 * The flush window (docs/history.md "Durability"): buffered messages are written at least this
 * often, so a relay killed outright loses at most this much of its record.
 */
export const HISTORY_FLUSH_MS = 1_000;
/** Retention by age and size is enforced this often. */
const RETENTION_EVERY_MS = 60_000;
/** What the store holds is read again this often for /health and /metrics. */
const STATS_EVERY_MS = 5_000;
/** Messages waiting for a write at most (about a minute of 50 busy books); past it they are dropped and counted. */
const MAX_PENDING = 200_000;

interface SentMessage {
  stream: AnyStream;
  frame: Frame;
  kind: 'snapshot' | 'update';
}

export interface HistoryRecording {
  recorder: HistoryRecorder<SentMessage>;
  /** What the publisher tells of each message it sends. */
  sink: RecordSink;
}

/** Opens the store and starts the recorder; undefined when `config` is (`--history off`). */
export async function startHistoryRecording(
  config: HistoryConfig | undefined,
  logger: Logger,
): Promise<HistoryRecording | undefined> {
  if (config === undefined) return undefined;
  const log = logger.child({ component: 'history' });
  const store = await openDuckDbStore(config.dataDir);
  const recorder = new HistoryRecorder<SentMessage>({
    store,
    toRecord: ({ stream, frame, kind }) => recordedOf(stream, frame, kind),
    flushMs: HISTORY_FLUSH_MS,
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
  return { recorder, sink: (stream, frame, kind) => recorder.record({ stream, frame, kind }) };
}
