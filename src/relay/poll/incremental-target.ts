/**
 * @module relay/poll/incremental-target
 * The poll target of a channel whose stream delivers each entry once (channels/relay-definition.ts
 * `PolledIncrementally`): the channel says what a poll reads and how it becomes states; this target
 * keeps the stream's memory of what it delivered (a new stream, a new epoch, starts a new one), asks
 * (in cluster mode only the lease holder, which shares what it read; the others deliver what their
 * own stream has not), drops a response older than one applied, publishes and reports.
 */

import type { DefinedChannel } from '../../../packages/protocol/src/channels/registry.ts';
import { streamIdKinds } from '../../../packages/protocol/src/protocol/messages.ts';
import type { ChannelState } from '../channels/codecs.ts';
import type { PolledIncrementally } from '../channels/relay-definition.ts';
import type { ChannelEventMap, ChannelUpstream } from '../channels/relay-registry.ts';
import { streamTargetKey } from '../coordination/redis/keys.ts';
import type { SharedResult } from '../coordination/shared-result.ts';
import type { StreamOf } from '../streams/stream.ts';
import type { PollOutcome } from './outcomes.ts';
import { type PollContext, PollTarget } from './poll-target.ts';
import type { TargetTiming } from './scheduler.ts';

/** A channel's incremental poll as the relay runs it. */
export type IncrementalPoll<C extends DefinedChannel> = PolledIncrementally<
  ChannelUpstream,
  ChannelState<C>,
  unknown,
  unknown,
  ChannelEventMap
>;

/** A stream and what it delivered. */
interface Held<C extends DefinedChannel> {
  stream: StreamOf<C>;
  memory: unknown;
}

export class IncrementalTarget<C extends DefinedChannel> extends PollTarget {
  readonly channel: C;
  readonly streamId: string;
  readonly #polled: IncrementalPoll<C>;
  /** What the current stream delivered; a new stream (a new epoch) starts a new memory. */
  #held: Held<C> | undefined;

  constructor(
    channel: C,
    polled: IncrementalPoll<C>,
    streamId: string,
    timing: TargetTiming,
    context: PollContext,
  ) {
    super(streamTargetKey(channel, streamId), timing, context);
    this.channel = channel;
    this.#polled = polled;
    this.streamId = streamId;
    context.cluster.follow(this.key, (result) => this.#onShared(result));
  }

  get kind(): C {
    return this.channel;
  }

  protected async pollOnce(): Promise<readonly PollOutcome[]> {
    const { cluster, now } = this.context;
    const askedAt = this.beginAsk();
    try {
      if (!(await this.holdsLease())) return [];
      const held = this.#streamHeld();
      if (held === undefined) return [];
      const fresh = await this.#polled.read(this.source, this.streamId, held.memory, this.readHooks());
      if (this.removed) return [];
      const receivedAt = now();
      const state = this.#apply(held, fresh, askedAt, receivedAt);
      if (state !== undefined)
        cluster.share(this.key, () => ({
          kind: 'response',
          receivedAt,
          body: this.#polled.shared(state, fresh),
        }));
      this.emitPoll(this.channel, 1, 'ok', askedAt);
      return [];
    } catch (error) {
      if (this.removed) return [];
      if (this.failedAtFirstRequest && this.#isGone(error)) {
        this.emitPoll(this.channel, 1, 'not_found', askedAt, error);
        cluster.share(this.key, () => ({ kind: 'not_found' }));
        return [this.#notFound()];
      }
      return this.failed(this.channel, 1, askedAt, error);
    }
  }

  /** Whether a failed request means upstream does not have this stream's id. */
  #isGone(error: unknown): boolean {
    const kind = streamIdKinds[this.channel];
    // Ids that name no one thing upstream (the one stream of a channel) are never refused as gone.
    if (kind === 'all' || kind === 'catalogue' || kind === 'of-market') return false;
    return this.context.existence.isGone(error, { kind, value: this.streamId });
  }

  #notFound(): PollOutcome {
    return { type: 'not_found', kind: this.channel, id: this.streamId };
  }

  /** The stream and what it delivered; undefined when nobody streams it any more. */
  #streamHeld(): Held<C> | undefined {
    const [stream] = this.context.registry.streamsOf(this.channel, this.streamId);
    if (stream === undefined) return undefined;
    if (this.#held?.stream !== stream) this.#held = { stream, memory: this.#polled.memory() };
    return this.#held;
  }

  /** Publishes what the stream has not delivered; returns its state after it. */
  #apply(held: Held<C>, fresh: unknown, askedAt: number, receivedAt: number): ChannelState<C> | undefined {
    if (!this.accepts(askedAt)) return undefined;
    const { stream, memory } = held;
    const first = !stream.hasState;
    const states = this.#polled.statesOf(stream.state, fresh, memory);
    // Nothing new still confirms the stream (its freshness), without an update.
    if (states.length === 0 && stream.state !== undefined) states.push(stream.state);
    // What is read this way carries no snapshot time: `ts` is when the relay received it.
    const ts = new Date(receivedAt).toISOString();
    let changed = false;
    for (const state of states) {
      if (this.context.publisher.publish(stream, state, ts, ts, receivedAt)) changed = true;
    }
    this.confirmed(askedAt, first ? undefined : changed);
    return stream.state;
  }

  /** The lease holder's result, ordered by when it received it (its polls never overlap). */
  #onShared(result: SharedResult): void {
    if (result.kind === 'not_found') this.context.report(this.#notFound());
    if (result.kind !== 'response') return;
    const parsed = this.#polled.schema.safeParse(result.body);
    const held = this.#streamHeld();
    if (parsed.success && held !== undefined)
      this.#apply(held, parsed.data, result.receivedAt, result.receivedAt);
  }
}
