/**
 * @module relay/targets/channel-targets
 * The poll targets of the `market` and `probabilities` channels: one upstream request per
 * poll each (relay/targets/stream-target.ts), scheduled with every other target within `--upstream-rps`.
 * - `market`: a market's detail record; once its status is not ACTIVE (expired, resolved) the
 *   update that says so is its last message and the stream is `closed`.
 * - `probabilities`: every market's entry in one request, the one stream `all`, however many
 *   subscribe.
 * The channels with a folder of their own are polled by relay/targets/defined-target.ts.
 */
import type { MarketData, ProbabilitiesData } from '../../protocol/messages.ts';
import {
  type MarketResponse,
  marketResponse,
  type ProbabilitiesResponse,
  probabilitiesResponse,
} from '../../upstream/schemas.ts';
import type { TargetTiming } from '../poll/scheduler.ts';
import type { PollOutcome } from './outcomes.ts';
import type { PollContext } from './poll-target.ts';
import { StreamTarget } from './stream-target.ts';

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

export class ProbabilitiesTarget extends StreamTarget<'probabilities', ProbabilitiesResponse> {
  protected readonly schema = probabilitiesResponse;

  constructor(streamId: string, timing: TargetTiming, context: PollContext) {
    super('probabilities', streamId, timing, context);
  }

  protected ask(): Promise<ProbabilitiesResponse> {
    return this.source.probabilities();
  }

  /** The same map is the books' change hints (relay/targets/change-hints.ts): read once for both. */
  protected override alsoFound(response: ProbabilitiesResponse, askedAt: number): PollOutcome[] {
    return [{ type: 'probabilities', response, askedAt }];
  }

  /** Keyed by market id in its one spelling (lower case), as every other stream names markets. */
  protected stateOf(response: ProbabilitiesResponse): ProbabilitiesData {
    const state: ProbabilitiesData = {};
    for (const [market, entry] of Object.entries(response.probabilities)) state[market.toLowerCase()] = entry;
    return state;
  }

  /** Entries carry their own times; the map as a whole has none. */
  protected tsOf(): undefined {
    return undefined;
  }
}
