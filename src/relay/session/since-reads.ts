/**
 * @module relay/session/since-reads
 * The history reads behind subscriptions with `since` of a channel that serves history
 * (docs/protocol.md "History since a time"; the channel's `history`, channels/relay-definition.ts):
 * each upstream request a one-off in a slot of the upstream budget (docs/scheduler.md "One-off
 * requests"), and one read shared by the subscribers asking the same (channel, market, since) at
 * the same time. A subscriber may share a read only if it started no earlier than the subscriber
 * joined the live stream: the subscriber's held live updates must reach back to where the read
 * began, or entries between the two would be missing (relay/session/since-seam.ts).
 */

import { type SinceSpec, sinceKey } from '../../../packages/protocol/src/channels/history.ts';
import { streamKey } from '../../../packages/protocol/src/channels/stream-key.ts';
import { SINCE_MAX_TRADES } from '../../../packages/protocol/src/channels/trades/since.ts';
import type { Channel } from '../../../packages/protocol/src/protocol/channels.ts';
import type { RecordReader } from '../../history/recorder.ts';
import type { HistoryRead, RecordedHistory, RecordedRun } from '../channels/relay-definition.ts';
import { type ChannelUpstream, historyOf } from '../channels/relay-registry.ts';
import type { StreamPosition } from '../streams/frame.ts';

/** Where a one-off upstream request waits for its slot (the poller pool's dispatcher). */
export interface OneOffBudget {
  runOneOff<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T>;
}

export interface SinceReadsOptions {
  upstream: ChannelUpstream;
  budget: OneOffBudget;
  /** How long one request waits for its slot of the budget before the read fails. */
  slotWaitMs: number;
  /** The position of a market's stream of `channel` now, if it has one. */
  position(channel: Channel, market: string): StreamPosition | undefined;
  /** The relay's record, when it records: `since` a time is read from it (./record-seam.ts). */
  record?: RecordReader | undefined;
}

interface SharedRead {
  result: Promise<HistoryRead<unknown>>;
  /** The stream's position when the read's first request started (undefined: not yet). */
  startedAt: StreamPosition | undefined;
}

/** Recorded messages one read takes at most (each holds an entry or more: past the entries' bound). */
const MAX_RECORDED_MESSAGES = 2 * SINCE_MAX_TRADES;

export class SinceReads {
  readonly #options: SinceReadsOptions;
  readonly #reads = new Map<string, SharedRead>();
  /** Reads started (not shared), for the tests and the operator. */
  started = 0;

  constructor(options: SinceReadsOptions) {
    this.#options = options;
  }

  /** The relay's record, when it records. */
  get record(): RecordReader | undefined {
    return this.#options.record;
  }

  /**
   * The entries of `channel`'s `market` since `since`, for a subscriber that joined its stream at
   * `joinedAt`; undefined when the channel serves no history.
   */
  read(
    channel: Channel,
    market: string,
    since: SinceSpec,
    joinedAt: StreamPosition,
  ): Promise<HistoryRead<unknown>> | undefined {
    const history = historyOf(channel);
    if (history === undefined) return undefined;
    const key = `${channel} ${market} ${sinceKey(since)}`;
    const shared = this.#reads.get(key);
    const start = shared?.startedAt;
    if (
      shared !== undefined &&
      (start === undefined || (start.epoch === joinedAt.epoch && start.seq >= joinedAt.seq))
    )
      return shared.result;
    const read: SharedRead = {
      result: Promise.resolve({ ok: true, pages: 0 }),
      startedAt: undefined,
    };
    const { upstream, budget, slotWaitMs, position } = this.#options;
    this.started += 1;
    // A read begins with its first upstream request or its first read of the record, whichever comes first.
    const begin = () => {
      read.startedAt ??= position(channel, market) ?? joinedAt;
    };
    const recorded = this.recorded(joinedAt);
    read.result = history
      .read(
        upstream,
        market,
        since,
        Date.now(),
        (ask) =>
          budget.runOneOff(() => {
            begin();
            return ask();
          }, AbortSignal.timeout(slotWaitMs)),
        {
          since: (of, streamId, from) => {
            begin();
            return recorded.since(of, streamId, from);
          },
          lastRun: (of, streamId, after) => {
            begin();
            return recorded.lastRun(of, streamId, after);
          },
        },
      )
      .finally(() => {
        if (this.#reads.get(key) === read) this.#reads.delete(key);
      });
    this.#reads.set(key, read);
    return read.result;
  }

  /** The relay's record as a channel's history reads it, for a subscriber joined at `joinedAt`. */
  recorded(joinedAt: StreamPosition): RecordedHistory {
    return {
      since: (channel, streamId, from) => this.#recorded(channel, streamId, from),
      lastRun: (channel, streamId, after) => this.#lastRun(channel, streamId, after, joinedAt),
    };
  }

  /**
   * The data of every recorded message of a stream from `from` on (the recorder's buffer written
   * first), when the record reaches back that far; read through the store's interface alone.
   */
  async #recorded(channel: Channel, streamId: string, from: number): Promise<unknown[] | undefined> {
    const record = this.#options.record;
    if (record === undefined) return undefined;
    await record.flush();
    const stream = streamKey(channel, streamId);
    const extent = await record.store.extent(stream);
    if (extent === undefined || extent.oldest > from) return undefined;
    const data: unknown[] = [];
    for await (const message of record.store.read({ stream, from, to: Date.now() + 1 })) {
      data.push(JSON.parse(message.data));
      // Each message brings at least one entry: past this many the read is refused as too long anyway.
      if (data.length > MAX_RECORDED_MESSAGES) break;
    }
    return data;
  }

  /**
   * The data of a stream's last unbroken run of recorded messages after `after` (the recorder's
   * buffer written first), and whether it reaches the subscriber's join at `joinedAt`: with no
   * hole between the run and the live messages the subscriber holds, the two make one history.
   */
  async #lastRun(
    channel: Channel,
    streamId: string,
    after: number,
    joinedAt: StreamPosition,
  ): Promise<RecordedRun | undefined> {
    const record = this.#options.record;
    if (record === undefined) return undefined;
    await record.flush();
    let run: unknown[] = [];
    let last: StreamPosition | undefined;
    // A run longer than a read may take: past the entries' bound anyway, unless a later run starts.
    let tooLong = false;
    const stream = streamKey(channel, streamId);
    const to = Date.now() + 1;
    // A run starts at a snapshot: what lies before the stream's last one is no part of the last run
    // (at worst it started at an earlier snapshot and is shorter read from here, never wrong).
    const from = Math.max(after, (await record.store.lastSnapshot(stream, to)) ?? after);
    for await (const message of record.store.read({ stream, from, to })) {
      const follows = last !== undefined && message.epoch === last.epoch && message.seq === last.seq + 1;
      if (!follows) {
        run = [];
        last = undefined;
        tooLong = false;
        // A hole: the next run starts at a snapshot.
        if (message.type !== 'snapshot') continue;
      }
      last = message;
      if (run.length >= MAX_RECORDED_MESSAGES) tooLong = true;
      else run.push(JSON.parse(message.data));
    }
    if (tooLong || last === undefined) return undefined;
    return { data: run, reachesJoin: last.epoch === joinedAt.epoch && last.seq >= joinedAt.seq };
  }
}
