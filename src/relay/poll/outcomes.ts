/**
 * @module relay/poll/outcomes
 * What a poll found beyond the states it published, as values: upstream has no such id, a stream
 * said its last, a request failed, a cheap request showed a book moved, the change-hint map arrived.
 * Targets return them from their polls (and report those a lease holder shared, which arrive outside
 * any poll); the pool applies every one here, in one place, instead of each target calling into it.
 */
import { streamIdNoun } from '../../../packages/protocol/src/protocol/channels.ts';
import { type HintMapChannel, type HintMapResponse, hintMap } from '../channels/relay-registry.ts';
import type { PollKind } from '../events.ts';
import type { StreamPublisher } from '../streams/publisher.ts';
import type { StreamRegistry } from '../streams/registry.ts';
import type { AnyStream } from '../streams/stream.ts';

export type PollOutcome =
  /** Upstream does not have the market (or feed, or path): its streams of `kind` end. */
  | { type: 'not_found'; kind: PollKind; id: string }
  /** The streams of `kind` for `id` have said their last (a market that left ACTIVE): they end. */
  | { type: 'ended'; kind: PollKind; id: string; reason: string }
  /** A request failed: freshness is judged now rather than on the next sweep. */
  | { type: 'failed' }
  /** A cheap request asked at `askedAt` shows the market's book moved, about `movedAt`. */
  | { type: 'book_moved'; market: string; askedAt: number; movedAt: number }
  /** The change-hint map (its channel's poll) asked for at `askedAt` arrived: the hints read it too. */
  | { type: HintMapChannel; response: HintMapResponse; askedAt: number };

/** What a poll found that only the targets it hints at read: a book moved, the change-hint map. */
export type HintOutcome = Extract<PollOutcome, { type: 'book_moved' | HintMapChannel }>;

/** What applying an outcome touches beyond the streams: the targets a hint is for, and the freshness judge. */
export interface OutcomeEffects {
  registry: StreamRegistry;
  publisher: StreamPublisher;
  hinted(outcome: HintOutcome): void;
  judgeFreshness(): void;
}

export function applyOutcome(outcome: PollOutcome, effects: OutcomeEffects): void {
  switch (outcome.type) {
    case 'not_found': {
      const reason = notFound(outcome.kind);
      ended(effects, effects.registry.closeMarket(outcome.kind, outcome.id, reason), reason);
      break;
    }
    case 'ended': {
      const { kind, id, reason } = outcome;
      ended(effects, effects.registry.closeStreams(kind, id, reason), reason);
      break;
    }
    case 'failed':
      effects.judgeFreshness();
      break;
    case 'book_moved':
    case hintMap.channel:
      effects.hinted(outcome);
      break;
  }
}

/** Streams the registry just closed: their subscribers hear why. */
function ended(effects: OutcomeEffects, streams: readonly AnyStream[], reason: string): void {
  for (const stream of streams) effects.publisher.emitState(stream, 'closed', reason);
}

/** `market not found upstream`, `path not found upstream`: the stream id's noun (protocol/channels.ts). */
function notFound(kind: PollKind): string {
  return `${streamIdNoun(kind)} not found upstream`;
}
