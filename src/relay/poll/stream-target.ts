/**
 * @module relay/poll/stream-target
 * A poll target that one upstream request per poll serves for the streams of one (channel, stream
 * id): a market's detail record, a feed, the map of every market. A subclass says what to ask
 * and how a response becomes the channel's state; this class asks (in cluster mode only the lease
 * holder asks, the others apply what it shares through the same path, as relay/channels/book/book-target.ts
 * does), puts the responses in order, publishes and reports.
 */

import type { z } from 'zod';
import { type PlainChannel, streamIdKinds } from '../../../packages/protocol/src/protocol/messages.ts';
import type { ChannelState } from '../channels/codecs.ts';
import { streamTargetKey } from '../coordination/redis/keys.ts';
import type { SharedResult } from '../coordination/shared-result.ts';
import type { PollOutcome } from './outcomes.ts';
import { type PollContext, PollTarget } from './poll-target.ts';
import type { TargetTiming } from './scheduler.ts';

export abstract class StreamTarget<C extends PlainChannel, Response> extends PollTarget {
  readonly channel: C;
  readonly streamId: string;

  constructor(channel: C, streamId: string, timing: TargetTiming, context: PollContext) {
    super(streamTargetKey(channel, streamId), timing, context);
    this.channel = channel;
    this.streamId = streamId;
    context.cluster.follow(this.key, (result) => this.#onShared(result));
  }

  get kind(): C {
    return this.channel;
  }

  /** The upstream request of one poll. */
  protected abstract ask(): Promise<Response>;
  /** How a shared response is validated again on arrival (the endpoint's own schema). */
  protected abstract readonly schema: z.ZodType<Response>;
  /** The channel's state of a response. */
  protected abstract stateOf(response: Response): ChannelState<C>;
  /** Upstream's time of the response's data, ISO 8601 with ms; undefined: the receive time. */
  protected abstract tsOf(response: Response): string | undefined;

  /** After a state was published: a reason to end the stream now (it will say nothing more), if any. */
  protected endReason(_state: ChannelState<C>): string | undefined {
    return undefined;
  }

  /** What a response shows beyond the channel's state (relay/poll/outcomes.ts); nothing by default. */
  protected alsoFound(_response: Response, _askedAt: number): PollOutcome[] {
    return [];
  }

  protected async pollOnce(): Promise<readonly PollOutcome[]> {
    const { cluster, now } = this.context;
    const askedAt = this.beginAsk();
    try {
      if (!(await this.holdsLease())) return [];
      const response = await this.ask();
      const found = this.alsoFound(response, askedAt);
      if (this.removed) return found;
      const receivedAt = now();
      const ended = this.#apply(response, askedAt, receivedAt);
      cluster.share(this.key, () => ({ kind: 'response', receivedAt, body: response }));
      this.emitPoll(this.channel, 1, 'ok', askedAt);
      return [...found, ...ended];
    } catch (error) {
      if (this.removed) return [];
      if (this.#isGone(error)) {
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

  /** Whether a failed request means upstream does not have this stream's id. */
  #isGone(error: unknown): boolean {
    const kind = streamIdKinds[this.channel];
    // The catalogue itself, the all-markets streams and a market's several streams name no id
    // upstream could refuse as such.
    if (kind === 'all' || kind === 'catalogue' || kind === 'of-market') return false;
    return this.context.existence.isGone(error, { kind, value: this.streamId });
  }

  /** Publishes a response; returns the end of the streams, if it was their last. */
  #apply(response: Response, askedAt: number, receivedAt: number): PollOutcome[] {
    if (!this.accepts(askedAt)) return [];
    const { registry, publisher } = this.context;
    const streams = registry.streamsOf(this.channel, this.streamId);
    if (streams.size === 0) return [];
    const state = this.stateOf(response);
    const rts = new Date(receivedAt).toISOString();
    const ts = this.tsOf(response) ?? rts;
    let changed = false;
    let first = false;
    for (const stream of streams) {
      first ||= !stream.hasState;
      if (publisher.publish(stream, state, ts, rts, receivedAt)) changed = true;
    }
    this.confirmed(askedAt, first ? undefined : changed);
    const reason = this.endReason(state);
    return reason === undefined ? [] : [{ type: 'ended', kind: this.channel, id: this.streamId, reason }];
  }

  /** The lease holder's result, ordered by when it received it (its polls never overlap). */
  #onShared(result: SharedResult): void {
    if (result.kind === 'not_found') this.context.report(this.#notFound());
    if (result.kind !== 'response') return;
    const parsed = this.schema.safeParse(result.body);
    if (!parsed.success) return;
    for (const outcome of this.#apply(parsed.data, result.receivedAt, result.receivedAt))
      this.context.report(outcome);
  }
}

/** A target of one (channel, stream id), whatever its response type. */
export type ChannelTarget = PollTarget & { readonly channel: PlainChannel; readonly streamId: string };

/** A channel polled with one target per stream id, and how each one's target is made. */
export interface StreamTargetChannel {
  readonly channel: PlainChannel;
  create(id: string, timing: TargetTiming, context: PollContext): ChannelTarget;
}
