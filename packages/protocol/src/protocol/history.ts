/**
 * @module protocol/history
 * The wire of the relay's record (docs/protocol.md "History and replay"): what a subscription's
 * `since` is answered with, and the `replay` conversation. Types only, shared by the relay and the
 * SDKs; ./requests.ts validates the requests against them.
 */
import type { BookDepth } from '../channels/book/wire.ts';

/** A request's `id`, as the client chose it; the relay echoes it on the answers. */
export type RequestId = string | number;

/** How a replay is paced: 1 = the original pacing, a multiplier of it, or as fast as the connection drains. */
export type ReplaySpeed = number | 'max';

/**
 * Sends the recorded messages of `channel`'s streams of `markets` whose `rts` lies in [from, to),
 * as they were sent, each with `replay: id` (docs/protocol.md "Replay").
 */
export interface ReplayRequest {
  op: 'replay';
  /** Names the replay in every message of it; required. */
  id: RequestId;
  channel: string;
  markets: string[];
  /** `book`: which depth's record (default: as `subscribe`). */
  depth?: BookDepth;
  /** `book`: which grouped stream's record. */
  group?: string;
  /** ISO 8601 time, inclusive. */
  from: string;
  /** ISO 8601 time, exclusive; default: now. */
  to?: string;
  /** Default 1. */
  speed?: ReplaySpeed;
}
export interface ReplayStopRequest {
  op: 'replay_stop';
  id: RequestId;
}

/** The record of a stream says where it starts (the `subscribed` reply to a `since`). */
export interface HistoryCoverage {
  /** ISO 8601: where the answer to `since` starts (the asked time when complete). */
  from: string;
  /** False where the record (or upstream's listing) starts later than asked. */
  complete: boolean;
}

/** Marks a hole in a replayed record: nothing was recorded of `market` between `from` and `to`. */
export interface ReplayGapMessage {
  type: 'replay_gap';
  id: RequestId;
  channel: string;
  market: string;
  from: string;
  to: string;
  /** Why, where the record says: `epoch_changed` (docs/protocol.md "Replay"); absent otherwise. */
  reason?: string;
}
/** The end of a replay: `messages` stream messages were sent (gaps not counted). */
export interface ReplayedMessage {
  type: 'replayed';
  id: RequestId;
  messages: number;
  /** Set when the replay ended on `replay_stop` rather than at `to`. */
  stopped?: true;
}
