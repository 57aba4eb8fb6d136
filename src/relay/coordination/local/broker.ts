/**
 * @module relay/coordination/local/broker
 * The broker of a relay alone: it holds every lease, numbers its own streams (`LocalNumbering`),
 * keeps its history in its own resume rings, has nobody to share with, and keeps to
 * `--upstream-rps` by itself.
 */
import { LocalRateGate, type RateGate } from '../../../upstream/rate-gate.ts';
import { RINGS_ALONE } from '../../streams/registry.ts';
import type { Stream } from '../../streams/stream.ts';
import type { Broker, BrokerCounter, BrokerGauge, BrokerStatus, ClusterReport } from '../broker.ts';
import type { NumberedCodec } from '../codecs.ts';
import type { SharedResult } from '../shared-result.ts';
import type { AppliedPoll, NumberingContext, PollTimes, StreamNumbering } from '../stream-numbering.ts';

export class LocalBroker implements Broker {
  readonly #owned = new Set<string>();
  readonly history = RINGS_ALONE;
  readonly recordingLeases = undefined;

  async claim(target: string): Promise<boolean> {
    this.#owned.add(target);
    return true;
  }

  streams<State, Delta>(
    _target: string,
    market: string,
    codec: NumberedCodec<State, Delta>,
    context: NumberingContext,
  ): StreamNumbering<State, Delta> {
    return new LocalNumbering(market, codec, context);
  }

  follow(_target: string, _onResult: (result: SharedResult) => void): void {}
  share(_target: string, _result: () => SharedResult): void {}

  forget(target: string): void {
    this.#owned.delete(target);
  }

  rateGate(rps: number): RateGate {
    return new LocalRateGate(rps);
  }

  budgetShare(): undefined {
    return undefined;
  }

  status(): BrokerStatus {
    return { mode: 'local', connected: true, owned: this.#owned.size, followed: 0, lastError: undefined };
  }

  report(): { redis?: ClusterReport } {
    return {};
  }

  gauges(): readonly BrokerGauge[] {
    return [];
  }

  counters(): readonly BrokerCounter[] {
    return [];
  }

  async close(): Promise<void> {
    this.#owned.clear();
  }
}

/**
 * A relay alone numbers the streams of a poll target itself (relay/coordination/stream-numbering.ts):
 * each poll goes straight to this relay's streams through the publisher, which diffs it against the
 * state each stream holds. Nothing is encoded or written for a cluster, and nobody else is asked
 * whether the target's streams may end.
 */
class LocalNumbering<State, Delta> implements StreamNumbering<State, Delta> {
  readonly keepsWholeState = false;
  readonly #market: string;
  readonly #codec: NumberedCodec<State, Delta>;
  readonly #context: Pick<NumberingContext, 'registry' | 'publisher'>;
  /** When the request behind the newest poll numbered was asked. */
  #askedAt = Number.NEGATIVE_INFINITY;
  /** The state last served: the same object again is the same state, which is only confirmed. */
  #last: State | undefined;

  constructor(
    market: string,
    codec: NumberedCodec<State, Delta>,
    context: Pick<NumberingContext, 'registry' | 'publisher'>,
  ) {
    this.#market = market;
    this.#codec = codec;
    this.#context = context;
  }

  async produce(
    state: () => State,
    poll: PollTimes,
    here?: readonly Stream<State, Delta>[],
  ): Promise<AppliedPoll | undefined> {
    if (poll.askedAt < this.#askedAt) return undefined;
    this.#askedAt = poll.askedAt;
    const { publisher } = this.#context;
    const streams = here ?? this.#streamsHere();
    if (streams.length === 0) return undefined;
    const span = poll.trace?.child('numbering', { 'market_relay.streams': streams.length });
    const next = state();
    const same = next === this.#last;
    this.#last = next;
    const { ts, rts, receivedAt } = poll;
    let changed = false;
    let first = false;
    for (const stream of streams) {
      first ||= !stream.hasState;
      if (same && stream.hasState) publisher.confirm(stream, rts, receivedAt);
      else if (publisher.publish(stream, this.#codec.project(next, stream.depth), ts, rts, receivedAt, span))
        changed = true;
    }
    span?.set({ 'market_relay.changed': changed });
    span?.end();
    return { receivedAt, changed, first };
  }

  async close(): Promise<boolean> {
    return true;
  }

  /**
   * This relay's streams of a target that does not keep them (a market's price), asked of the
   * registry on every poll (one pass over the market's streams of the channel), so a stream added or
   * removed since the last poll is served or left out at once. A grouped stream is numbered by each relay from the target it polled or was
   * shared (relay/channels/book/book-target.ts).
   */
  #streamsHere(): Stream<State, Delta>[] {
    const here: Stream<State, Delta>[] = [];
    // The codec is its channel's numbering (relay/coordination/codecs.ts), so its channel's streams
    // hold its state and take its updates.
    const streams = this.#context.registry.streamsOf(this.#codec.channel, this.#market) as ReadonlySet<
      Stream<State, Delta>
    >;
    for (const stream of streams) if (stream.group === undefined) here.push(stream);
    return here;
  }
}
