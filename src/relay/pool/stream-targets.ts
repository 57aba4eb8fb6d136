/**
 * @module relay/pool/stream-targets
 * The poller pool's targets of the channels polled per stream id: one request per poll
 * (relay/poll/stream-target.ts), or as many as what is new to a stream needs
 * (relay/poll/incremental-target.ts). One target per (channel, id) the registry holds, created
 * and dropped with the streams, each judged for freshness on its own (relay/pool/freshness.ts).
 * A channel joins by its slice's row (`StreamTargetChannel`, from its `target/` folder) in
 * `streamTargetChannels`, or by its server part in the relay registry.
 */

import type { DefinedChannel } from '../../../packages/protocol/src/channels/registry.ts';
import type { PlainChannel } from '../../../packages/protocol/src/protocol/messages.ts';
import { marketTargets } from '../channels/market/target/market-target.ts';
import { marketsTargets } from '../channels/markets/target/catalogue-target.ts';
import { relayChannels } from '../channels/relay-registry.ts';
import { restTargets } from '../channels/rest/target/rest-target.ts';
import { streamTargetKey } from '../coordination/redis/keys.ts';
import { DefinedTarget } from '../poll/defined-target.ts';
import type { PollDispatcher } from '../poll/dispatcher.ts';
import { IncrementalTarget } from '../poll/incremental-target.ts';
import { KeptTarget } from '../poll/kept-target.ts';
import type { PollContext } from '../poll/poll-target.ts';
import type { TargetTiming } from '../poll/scheduler.ts';
import type { ChannelTarget, StreamTargetChannel } from '../poll/stream-target.ts';

/** The channels with one target per stream id, each slice's own row. */
const streamTargetChannels: readonly StreamTargetChannel[] = [
  marketTargets,
  marketsTargets,
  restTargets,
  ...definedTargetChannels(),
];

/** The channels with a folder of their own that are polled per stream id. */
function definedTargetChannels(): StreamTargetChannel[] {
  return (Object.keys(relayChannels) as DefinedChannel[]).flatMap((channel) => {
    const { polled, incremental, kept } = relayChannels[channel];
    if (polled !== undefined) {
      const create: StreamTargetChannel['create'] = (id, timing, context) =>
        new DefinedTarget(channel, polled, id, timing, context);
      return [{ channel, create }];
    }
    if (incremental !== undefined) {
      const create: StreamTargetChannel['create'] = (id, timing, context) =>
        new IncrementalTarget(channel, incremental, id, timing, context);
      return [{ channel, create }];
    }
    if (kept !== undefined) {
      const create: StreamTargetChannel['create'] = (id, timing, context) =>
        new KeptTarget(channel, kept, id, timing, context);
      return [{ channel, create }];
    }
    return [];
  });
}

export class StreamTargets {
  readonly #context: PollContext;
  readonly #dispatcher: PollDispatcher;
  readonly #targets = new Map<string, ChannelTarget>();
  readonly #counts = new Map<PlainChannel, number>();
  /**
   * The timing every target here shares, one object: a new plan retimes them all by changing it,
   * without a walk over ten thousand targets each time a stream comes or goes.
   */
  readonly #timing: TargetTiming;

  constructor(context: PollContext, dispatcher: PollDispatcher, timing: TargetTiming) {
    this.#context = context;
    this.#dispatcher = dispatcher;
    this.#timing = { ...timing };
  }

  get size(): number {
    return this.#targets.size;
  }

  values(): IterableIterator<ChannelTarget> {
    return this.#targets.values();
  }

  get(channel: PlainChannel, id: string): ChannelTarget | undefined {
    return this.#targets.get(streamTargetKey(channel, id));
  }

  countOf(channel: PlainChannel): number {
    return this.#counts.get(channel) ?? 0;
  }

  /** Every target asked at `timing` from now on (the interval moved with the budget). */
  retime(timing: TargetTiming): void {
    Object.assign(this.#timing, timing);
  }

  /** Whether `channel`'s streams are polled here, one target per stream id. */
  static polls(channel: string): channel is PlainChannel {
    return creators.has(channel as PlainChannel);
  }

  /** One target per (channel, id) the registry holds; the others are dropped. Walks them all. */
  sync(): void {
    const { registry } = this.#context;
    for (const target of this.#targets.values()) {
      if (registry.streamsOf(target.channel, target.streamId).size === 0) this.#drop(target);
    }
    for (const { channel } of streamTargetChannels) {
      for (const id of registry.ids(channel).keys()) this.syncOne(channel, id);
    }
  }

  /**
   * The one (channel, id) whose streams came or went: its target made or dropped. What a change
   * of interest costs, whatever the number of targets.
   */
  syncOne(channel: PlainChannel, id: string): ChannelTarget | undefined {
    const key = streamTargetKey(channel, id);
    const existing = this.#targets.get(key);
    const wanted = this.#context.registry.streamsOf(channel, id).size > 0;
    if (existing !== undefined) {
      if (!wanted) this.#drop(existing);
      return wanted ? existing : undefined;
    }
    const create = creators.get(channel);
    if (!wanted || create === undefined) return undefined;
    const target = create(id, this.#timing, this.#context);
    this.#targets.set(target.key, target);
    this.#counts.set(channel, (this.#counts.get(channel) ?? 0) + 1);
    this.#dispatcher.add(target);
    return target;
  }

  clear(): void {
    for (const target of [...this.#targets.values()]) this.#drop(target);
  }

  #drop(target: ChannelTarget): void {
    target.removed = true;
    this.#targets.delete(target.key);
    this.#counts.set(target.channel, (this.#counts.get(target.channel) ?? 1) - 1);
    this.#dispatcher.remove(target.key);
    this.#context.cluster.forget(target.key);
  }
}

const creators = new Map(streamTargetChannels.map(({ channel, create }) => [channel, create]));
