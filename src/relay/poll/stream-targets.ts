/**
 * @module relay/poll/stream-targets
 * The poller pool's targets of the channels polled per stream id: one request per poll
 * (relay/poll/stream-target.ts), or as many as what is new to a stream needs
 * (relay/poll/incremental-target.ts), or the `DefinedTarget` below for a channel the relay registry declares. One target per (channel, id) the registry holds, created
 * and dropped with the streams, each judged for freshness on its own (relay/poll/freshness.ts).
 * One collection for every such channel (relay/poll/target-collection.ts): a channel joins by
 * its slice's row (`StreamTargetChannel`, from its `*-target.ts`) in the poll side's one list
 * (src/poll-targets.ts), or by its server part in the relay registry (`definedTargetChannels`).
 */

import type { DefinedChannel } from '../../../packages/protocol/src/channels/registry.ts';
import type { Channel, PlainChannel } from '../../../packages/protocol/src/protocol/messages.ts';
import type { ChannelState } from '../channels/codecs.ts';
import type { PolledPerStream } from '../channels/relay-definition.ts';
import {
  type ChannelUpstream,
  type HintMapResponse,
  hintMap,
  relayChannels,
} from '../channels/relay-registry.ts';
import { streamTargetKey } from '../coordination/redis/keys.ts';
import type { AnyStream } from '../streams/stream.ts';
import type { PollDispatcher } from './dispatcher.ts';
import { IncrementalTarget } from './incremental-target.ts';
import { KeptTarget } from './kept-target.ts';
import type { PollOutcome } from './outcomes.ts';
import type { PlannedTargets, PollPlan } from './plan.ts';
import { type FreshnessView, type PollContext, TargetsByKey } from './poll-target.ts';
import type { TargetTiming } from './scheduler.ts';
import { type ChannelTarget, StreamTarget, type StreamTargetChannel } from './stream-target.ts';
import type { CollectionParts, TargetCollection } from './target-collection.ts';

/**
 * The poll target of a channel with a folder of its own that is polled one upstream request per
 * stream id (channels/relay-definition.ts `PolledPerStream`): the channel says what to ask and
 * how a response becomes its state, relay/poll/stream-target.ts does the rest.
 */
export class DefinedTarget<C extends DefinedChannel> extends StreamTarget<C, unknown> {
  protected readonly schema;
  readonly #polled: PolledPerStream<ChannelUpstream, unknown, ChannelState<C>>;

  constructor(
    channel: C,
    polled: PolledPerStream<ChannelUpstream, unknown, ChannelState<C>>,
    streamId: string,
    timing: TargetTiming,
    context: PollContext,
  ) {
    super(channel, streamId, timing, context);
    this.#polled = polled;
    this.schema = polled.schema;
  }

  protected ask(): Promise<unknown> {
    return this.#polled.ask(this.source, this.streamId);
  }

  protected stateOf(response: unknown): ChannelState<C> {
    return this.#polled.stateOf(response);
  }

  protected tsOf(response: unknown): string | undefined {
    return this.#polled.tsOf(response);
  }

  /** The change-hint map, when the response is it: read once for the channel and the books. */
  protected override alsoFound(response: unknown, askedAt: number): PollOutcome[] {
    if (this.channel !== hintMap.channel) return [];
    // The channel's schema checked the response, and the hint map's channel polls upstream's map.
    return [{ type: hintMap.channel, response: response as HintMapResponse, askedAt }];
  }
}

/** The channels with a folder of their own that are polled per stream id. */
export function definedTargetChannels(): StreamTargetChannel[] {
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

export class StreamTargets implements TargetCollection<ChannelTarget> {
  readonly channels: readonly PlainChannel[];
  readonly kind = 'stream';
  readonly #context: PollContext;
  readonly #dispatcher: PollDispatcher;
  readonly #plan: PollPlan;
  readonly #creators: ReadonlyMap<PlainChannel, StreamTargetChannel['create']>;
  readonly #targets = new TargetsByKey<ChannelTarget>((target) =>
    this.#context.registry.streamsOf(target.channel, target.streamId),
  );
  readonly judged: FreshnessView = this.#targets;
  readonly #counts = new Map<PlainChannel, number>();
  /**
   * The timing every target here shares, one object: a new plan retimes them all by changing it,
   * without a walk over ten thousand targets each time a stream comes or goes.
   */
  readonly #timing: TargetTiming;

  /** `rows`: each channel polled per stream id, with how its target is made. */
  constructor({ context, dispatcher, plan }: CollectionParts, rows: readonly StreamTargetChannel[]) {
    this.#context = context;
    this.#dispatcher = dispatcher;
    this.#plan = plan;
    this.#timing = { ...plan.streamTiming() };
    this.#creators = new Map(rows.map(({ channel, create }) => [channel, create]));
    this.channels = [...this.#creators.keys()];
  }

  get size(): number {
    return this.#targets.size;
  }

  targetOf(channel: Channel, id: string): ChannelTarget | undefined {
    return this.#targets.get(streamTargetKey(channel as PlainChannel, id));
  }

  streamsOf(target: ChannelTarget): Iterable<AnyStream> {
    return this.#context.registry.streamsOf(target.channel, target.streamId);
  }

  count(into: PlannedTargets): void {
    into.streamTargets += this.#targets.size;
  }

  targetCount(channel: Channel): number {
    return this.#counts.get(channel as PlainChannel) ?? 0;
  }

  /** Every target asked at the plan's timing from now on (the interval moved with the budget). */
  replanned(): void {
    Object.assign(this.#timing, this.#plan.streamTiming());
  }

  /** One target per (channel, id) the registry holds; the others are dropped. Walks them all. */
  syncAll(): readonly ChannelTarget[] {
    const { registry } = this.#context;
    for (const target of this.#targets.values()) {
      if (registry.streamsOf(target.channel, target.streamId).size === 0) this.#drop(target);
    }
    for (const channel of this.channels) {
      for (const id of registry.ids(channel).keys()) this.follow(channel, id);
    }
    return [];
  }

  /**
   * The one (channel, id) whose streams came or went: its target made or dropped. What a change
   * of interest costs, whatever the number of targets.
   */
  follow(channel: Channel, id: string): readonly ChannelTarget[] {
    const plain = channel as PlainChannel;
    const existing = this.#targets.get(streamTargetKey(plain, id));
    const wanted = this.#context.registry.streamsOf(plain, id).size > 0;
    if (existing !== undefined) {
      if (!wanted) this.#drop(existing);
      return [];
    }
    const create = this.#creators.get(plain);
    if (!wanted || create === undefined) return [];
    const target = create(id, this.#timing, this.#context);
    this.#targets.set(target.key, target);
    this.#counts.set(plain, (this.#counts.get(plain) ?? 0) + 1);
    this.#dispatcher.add(target);
    return [];
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
