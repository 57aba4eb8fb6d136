/**
 * @module relay/poll/kept-target
 * The poll target of a channel with a folder of its own whose streams keep a state across polls
 * (channels/relay-definition.ts `StreamKeeper`): the channel says what a stream keeps, what a
 * poll reads and how it is merged in; here are the lease, the order of responses, publishing, and
 * in cluster mode the lease holder's share, which the others publish as theirs and carry on from.
 */

import type { DefinedChannel } from '../../../packages/protocol/src/channels/registry.ts';
import type { ChannelState } from '../channels/codecs.ts';
import type { StreamKeeper } from '../channels/relay-definition.ts';
import type { ChannelEventMap, ChannelUpstream } from '../channels/relay-registry.ts';
import { streamTargetKey } from '../coordination/redis/keys.ts';
import type { SharedResult } from '../coordination/shared-result.ts';
import { marketId } from './not-found.ts';
import type { PollOutcome } from './outcomes.ts';
import { type PollContext, PollTarget } from './poll-target.ts';
import type { TargetTiming } from './scheduler.ts';

/** How the channel makes the keeper of a new stream (its relay part's `kept`). */
type NewKeeper<C extends DefinedChannel> = (
  streamId: string,
) => StreamKeeper<ChannelUpstream, ChannelState<C>, ChannelEventMap>;

export class KeptTarget<C extends DefinedChannel> extends PollTarget {
  readonly kind: C;
  readonly channel: C;
  readonly streamId: string;
  readonly #keeper: StreamKeeper<ChannelUpstream, ChannelState<C>, ChannelEventMap>;

  constructor(
    channel: C,
    newKeeper: NewKeeper<C>,
    streamId: string,
    timing: TargetTiming,
    context: PollContext,
  ) {
    super(streamTargetKey(channel, streamId), timing, context);
    this.kind = channel;
    this.channel = channel;
    this.streamId = streamId;
    this.#keeper = newKeeper(streamId);
    context.cluster.follow(this.key, (result) => this.#onShared(result));
  }

  protected async pollOnce(): Promise<readonly PollOutcome[]> {
    const { cluster, now } = this.context;
    const askedAt = this.beginAsk();
    try {
      if (!(await this.holdsLease())) return [];
      if (!this.#held()) return [];
      const read = await this.#keeper.read({ upstream: this.source, askedAt, ...this.readHooks() });
      if (this.removed) return [];
      const receivedAt = now();
      if (!this.accepts(askedAt) || !this.#held()) return [];
      read.apply();
      this.#publish(receivedAt, askedAt);
      cluster.share(this.key, () => ({ kind: 'response', receivedAt, body: this.#keeper.shared() }));
      this.emitPoll(this.channel, 1, 'ok', askedAt);
      return [];
    } catch (error) {
      if (this.removed) return [];
      const { market } = this.#keeper;
      if (this.failedAtFirstRequest && this.context.existence.isGone(error, marketId(market))) {
        this.emitPoll(this.channel, 1, 'not_found', askedAt, error);
        cluster.share(this.key, () => ({ kind: 'not_found' }));
        return [this.#notFound()];
      }
      return this.failed(this.channel, 1, askedAt, error);
    }
  }

  #notFound(): PollOutcome {
    return { type: 'not_found', kind: this.channel, id: this.streamId };
  }

  /** Whether somebody holds the stream here. */
  #held(): boolean {
    return this.context.registry.streamsOf(this.channel, this.streamId).size > 0;
  }

  #publish(receivedAt: number, askedAt: number): void {
    const { registry, publisher } = this.context;
    const state = this.#keeper.state;
    // What a keeper reads has no snapshot time upstream: `ts` is when the relay received it.
    const ts = new Date(receivedAt).toISOString();
    let changed = false;
    let first = false;
    for (const stream of registry.streamsOf(this.channel, this.streamId)) {
      first ||= !stream.hasState;
      if (publisher.publish(stream, state, ts, ts, receivedAt)) changed = true;
    }
    this.confirmed(askedAt, first ? undefined : changed);
  }

  /** The lease holder's share, ordered by when it received it (its polls never overlap). */
  #onShared(result: SharedResult): void {
    if (result.kind === 'not_found') this.context.report(this.#notFound());
    if (result.kind !== 'response' || !this.accepts(result.receivedAt)) return;
    if (!this.#held() || !this.#keeper.takeShared(result.body, result.receivedAt)) return;
    this.#publish(result.receivedAt, result.receivedAt);
  }
}
