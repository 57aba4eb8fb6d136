/**
 * @module relay/poll/defined-target
 * The poll target of a channel with a folder of its own that is polled one upstream request per
 * stream id (channels/relay-definition.ts `PolledPerStream`): the channel says what to ask and
 * how a response becomes its state, relay/poll/stream-target.ts does the rest.
 */

import type { DefinedChannel } from '../../../packages/protocol/src/channels/registry.ts';
import type { ChannelState } from '../channels/codecs.ts';
import type { PolledPerStream } from '../channels/relay-definition.ts';
import { type ChannelUpstream, type HintMapResponse, hintMap } from '../channels/relay-registry.ts';
import type { PollOutcome } from './outcomes.ts';
import type { PollContext } from './poll-target.ts';
import type { TargetTiming } from './scheduler.ts';
import { StreamTarget } from './stream-target.ts';

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
