/**
 * @module relay/poll/target-collection
 * What the poller pool (relay/poll/poller-pool.ts) asks of a slice's targets, whatever the channel:
 * the pool follows the registry's interest one stream id at a time, hands the targets to the
 * dispatcher, makes their holders again and has their freshness judged, through this interface
 * only. Each slice's target part implements it (the books, the price batches) and so do the
 * targets of the channels polled one request per stream id (relay/poll/stream-targets.ts); the one
 * list of them is made above the slices (src/poll-targets.ts) and handed to the pool, which names
 * no channel.
 */
import type { Channel } from '../../../packages/protocol/src/protocol/messages.ts';
import type { AnyStream } from '../streams/stream.ts';
import type { PollDispatcher } from './dispatcher.ts';
import type { HintOutcome } from './outcomes.ts';
import type { PlanKind, PlannedTargets, PollIntervals, PollPlan } from './plan.ts';
import type { FreshnessView, PollContext, PollTarget } from './poll-target.ts';
import type { SchedulerMode } from './scheduler.ts';

/** What a collection is made with: the pool's context, dispatcher and plan. */
export interface CollectionParts {
  context: PollContext;
  dispatcher: PollDispatcher;
  plan: PollPlan;
  scheduler: SchedulerMode;
}

/** Makes one collection for a pool; the list of these is the poll side's one list of channels. */
export type TargetCollectionMaker = (parts: CollectionParts) => TargetCollection;

export interface TargetCollection<T extends PollTarget = PollTarget> {
  /** The channels whose streams these targets poll for. */
  readonly channels: readonly Channel[];
  /** The kind of timing the plan gives these targets. */
  readonly kind: PlanKind;
  /** Targets held now; 0: the pool leaves the collection out of every walk. */
  readonly size: number;
  /**
   * The one (channel, id) whose streams came or went: its target made or dropped. The targets
   * whose served streams changed besides (their holders are made again).
   */
  follow(channel: Channel, id: string): readonly T[];
  /** Every target brought in line with the registry (start-up); the targets whose holders are made again. */
  syncAll(): readonly T[];
  /** The target whose request serves (channel, id)'s streams. */
  targetOf(channel: Channel, id: string): T | undefined;
  /** The streams `target`'s request serves. */
  streamsOf(target: T): Iterable<AnyStream>;
  /** Adds these targets to what the plan is made for. */
  count(into: PlannedTargets): void;
  /** Targets polled for `channel`. */
  targetCount(channel: Channel): number;
  /** A new plan: the targets take their timing from it. */
  replanned(intervals: PollIntervals): void;
  /** What freshness judges of these targets, read by the judge without a call into the collection. */
  readonly judged: FreshnessView;
  /** What a poll found that only these targets read (a book's hints). */
  hinted?(outcome: HintOutcome): void;
  clear(): void;
}
