/**
 * @module relay/targets/stream-targets
 * The poller pool's targets of the channels polled per stream id: one request per poll
 * (relay/targets/stream-target.ts), or for `trades` as many activity pages as new trades need
 * (relay/targets/trades-target.ts). One target per (channel, id) the registry holds, created and dropped
 * with the streams, each judged for freshness on its own (relay/targets/freshness-judge.ts). A channel joins by a row in
 * `streamTargetChannels`.
 */

import type { PlainChannel } from '../../protocol/messages.ts';
import { streamTargetKey } from '../../util/keys.ts';
import type { PollDispatcher } from '../poll/dispatcher.ts';
import type { TargetTiming } from '../poll/scheduler.ts';
import { CandlesTarget } from './candles-target.ts';
import { CatalogueTarget } from './catalogue-target.ts';
import { MarketTarget, OracleTarget, ProbabilitiesTarget } from './channel-targets.ts';
import type { PollContext, PollTarget } from './poll-target.ts';
import { RestTarget } from './rest-target.ts';
import { TradesTarget } from './trades-target.ts';

/** A target of one (channel, stream id), whatever its response type. */
export type ChannelTarget = PollTarget & { readonly channel: PlainChannel; readonly streamId: string };

type CreateTarget = (id: string, timing: TargetTiming, context: PollContext) => ChannelTarget;

/** The channels with one target per stream id, and how each one's target is made. */
export const streamTargetChannels: ReadonlyArray<{ channel: PlainChannel; create: CreateTarget }> = [
  { channel: 'market', create: (id, timing, context) => new MarketTarget(id, timing, context) },
  { channel: 'probabilities', create: (id, timing, context) => new ProbabilitiesTarget(id, timing, context) },
  { channel: 'oracle', create: (id, timing, context) => new OracleTarget(id, timing, context) },
  { channel: 'trades', create: (id, timing, context) => new TradesTarget(id, timing, context) },
  { channel: 'markets', create: (id, timing, context) => new CatalogueTarget(id, timing, context) },
  { channel: 'rest', create: (id, timing, context) => new RestTarget(id, timing, context) },
  { channel: 'candles', create: (id, timing, context) => new CandlesTarget(id, timing, context) },
];

export class StreamTargets {
  readonly #context: PollContext;
  readonly #dispatcher: PollDispatcher;
  readonly #targets = new Map<string, ChannelTarget>();

  constructor(context: PollContext, dispatcher: PollDispatcher) {
    this.#context = context;
    this.#dispatcher = dispatcher;
  }

  get size(): number {
    return this.#targets.size;
  }

  values(): IterableIterator<ChannelTarget> {
    return this.#targets.values();
  }

  countOf(channel: PlainChannel): number {
    let count = 0;
    for (const target of this.#targets.values()) if (target.channel === channel) count += 1;
    return count;
  }

  /** One target per (channel, id) the registry holds, at `timing`; the others are dropped. */
  sync(timing: TargetTiming): void {
    const { registry } = this.#context;
    for (const target of this.#targets.values()) {
      if (registry.streamsOf(target.channel, target.streamId).size > 0) target.timing = timing;
      else this.#drop(target);
    }
    for (const { channel, create } of streamTargetChannels) {
      for (const id of registry.ids(channel).keys()) {
        if (this.#targets.has(streamTargetKey(channel, id))) continue;
        const target = create(id, timing, this.#context);
        this.#targets.set(target.key, target);
        this.#dispatcher.add(target);
      }
    }
  }

  clear(): void {
    for (const target of [...this.#targets.values()]) this.#drop(target);
  }

  #drop(target: ChannelTarget): void {
    target.removed = true;
    this.#targets.delete(target.key);
    this.#dispatcher.remove(target.key);
    this.#context.cluster.forget(target.key);
  }
}
