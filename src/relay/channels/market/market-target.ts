/**
 * @module relay/channels/market/market-target
 * The poll target of the `market` channel: one upstream request per
 * poll each (relay/poll/stream-target.ts), scheduled with every other target within `--upstream-rps`.
 * - `market`: a market's detail record; once its status is not ACTIVE (expired, resolved) the
 *   update that says so is its last message and the stream is `closed`.
 * The channels with a folder of their own are polled by relay/poll/stream-targets.ts.
 */
import type { MarketData } from '../../../../packages/protocol/src/protocol/messages.ts';
import { type MarketResponse, marketResponse } from '../../../upstream/schemas.ts';
import type { PollContext } from '../../poll/poll-target.ts';
import type { TargetTiming } from '../../poll/scheduler.ts';
import { StreamTarget, type StreamTargetChannel } from '../../poll/stream-target.ts';

/** The one status in which a market still moves (docs/upstream.md). */
export const ACTIVE_STATUS = 'ACTIVE';

export class MarketTarget extends StreamTarget<'market', MarketResponse> {
  protected readonly schema = marketResponse;

  constructor(market: string, timing: TargetTiming, context: PollContext) {
    super('market', market, timing, context);
  }

  protected ask(): Promise<MarketResponse> {
    return this.source.market(this.streamId);
  }

  protected stateOf(response: MarketResponse): MarketData {
    return response.market;
  }

  /** The detail record carries no time of its own. */
  protected tsOf(): undefined {
    return undefined;
  }

  /** `market expired`, `market resolved`: the status in lower case. */
  protected override endReason(state: MarketData): string | undefined {
    const { status } = state;
    return typeof status === 'string' && status !== ACTIVE_STATUS
      ? `market ${status.toLowerCase()}`
      : undefined;
  }
}

/** The `market` channel's streams, one target per market. */
export const marketTargets: StreamTargetChannel = {
  channel: 'market',
  create: (id, timing, context) => new MarketTarget(id, timing, context),
};
