/**
 * @module history/store
 * The record of what the relay served (docs/history.md), behind one interface: a store appends
 * batches of recorded messages, reads one stream's messages in a time range in order without holding
 * them all, says how far each stream's record reaches, keeps to its retention, and reports what it
 * holds. The embedded DuckDB store (history/duckdb-store.ts) is one implementation; a shared engine
 * for a cluster is another beside it, and `test/history/history-store.contract.test.ts` runs against
 * each.
 */

import { hasDepths } from '../../packages/protocol/src/channels/registry.ts';

/**
 * One `snapshot` or `update` as the relay sent it: every field of the message, its `data` as the JSON
 * text that went out, so that the message can be rebuilt byte for byte (relay/streams/recorded.ts).
 * The envelope is kept as columns rather than text: it repeats on every message of a stream, and a
 * store compresses a column of it to almost nothing.
 */
export interface RecordedMessage {
  channel: string;
  /** The stream's key (protocol `streamKey`: channel, stream id and, for a book, its depth). */
  stream: string;
  /** The stream id: a market UUID, a canonical path, `all`. */
  market: string;
  /** A book stream's depth (null: the full book); undefined on other channels. */
  depth: number | null | undefined;
  /** A grouped book stream's group step; undefined on every other stream. */
  group?: string | undefined;
  epoch: string;
  seq: number;
  /** protocol.md `ts`, as sent. */
  ts: string;
  /** protocol.md `rts`, as sent: the relay's receive time, the record's time. */
  rts: string;
  type: 'snapshot' | 'update';
  /** The message's `data` as the JSON text sent. */
  data: string;
  /** A book's CRC-32 of the state after the message, where the message carries one. */
  checksum: number | undefined;
}

/**
 * A stored message's depth as its record holds it: a stream of a channel with depths (a book's) has
 * one, null for the whole book; every other stream has none. The engines store both absences as one
 * NULL, which the channel tells apart.
 */
export function recordedDepth(channel: string, depth: number | null): number | null | undefined {
  return hasDepths(channel) ? depth : undefined;
}

/** One stream's messages whose `rts` lies in [from, to). */
export interface HistoryRange {
  stream: string;
  /** Epoch milliseconds, inclusive. */
  from: number;
  /** Epoch milliseconds, exclusive. */
  to: number;
}

/** How far a stream's record reaches (epoch milliseconds of `rts`). */
export interface HistoryExtent {
  oldest: number;
  newest: number;
  rows: number;
}

/** What a store keeps to: records older than `maxAgeMs` go, then the oldest until under `maxBytes`. */
export interface RetentionPolicy {
  maxAgeMs: number;
  maxBytes: number;
}

/** What a store holds, for the metrics and `/health`. */
export interface HistoryStoreStats {
  rows: number;
  /** What the store occupies on disk (or in its engine), all of it counted. */
  bytes: number;
  /** `rts` of the oldest record held; undefined when empty. */
  oldest: number | undefined;
}

export interface HistoryStore {
  /** A name for logs and `/health`: the engine and where it keeps its data. */
  readonly description: string;
  /** Appends a batch in one write; it is durable when the promise resolves. Rejects when it cannot write. */
  append(batch: readonly RecordedMessage[]): Promise<void>;
  /**
   * The range's messages ordered by `rts`, then `seq`, read a page at a time: memory stays bounded
   * whatever the range holds. Stopping the iteration early releases what the read holds.
   */
  read(range: HistoryRange): AsyncIterable<RecordedMessage>;
  /** The range written as a Parquet file at `file` (columns of docs/history.md "Export"). */
  writeParquet(range: HistoryRange, file: string): Promise<void>;
  /** How far one stream's record reaches; undefined when nothing of it is held. */
  extent(stream: string): Promise<HistoryExtent | undefined>;
  /** `rts` (epoch ms) of one stream's last `snapshot` at or before `at`; undefined when it has none. */
  lastSnapshot(stream: string, at: number): Promise<number | undefined>;
  /** Drops what the policy no longer keeps, at `now`; returns the rows dropped. */
  enforceRetention(policy: RetentionPolicy, now: number): Promise<number>;
  stats(): Promise<HistoryStoreStats>;
  /** Writes what is pending and releases the engine; nothing may be called after. */
  close(): Promise<void>;
}
