/**
 * @module relay/coordination/local/broker
 * The broker of a relay alone: it holds every lease, numbers its own streams (`LocalNumbering`),
 * keeps its history in its own resume rings, has nobody to share with, and keeps to
 * `--upstream-rps` by itself.
 */
import { LocalRateGate, type RateGate } from '../../../upstream/rate-gate.ts';
import type { StreamPublisher } from '../../streams/publisher.ts';
import { RINGS_ALONE } from '../../streams/registry.ts';
import type { Broker, BrokerCounter, BrokerGauge, BrokerStatus, ClusterReport } from '../broker.ts';
import type { NumberedCodec } from '../codecs.ts';
import type { SharedResult } from '../shared-result.ts';
import type {
  AppliedPoll,
  NumberingContext,
  PolledState,
  PollTimes,
  StreamNumbering,
} from '../stream-numbering.ts';

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
    _market: string,
    _codec: NumberedCodec<State, Delta>,
    context: NumberingContext,
  ): StreamNumbering<State, Delta> {
    return new LocalNumbering(context.publisher);
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
 * each poll's changes, made by the target's channel against the state each of this relay's streams
 * holds, go straight to those streams through the publisher, which numbers and frames them. Nothing
 * is encoded or written for a cluster, and nobody else is asked whether the target's streams may end.
 */
class LocalNumbering<State, Delta> implements StreamNumbering<State, Delta> {
  readonly keepsWholeState = false;
  readonly #publisher: StreamPublisher;
  /** When the request behind the newest poll numbered was asked. */
  #askedAt = Number.NEGATIVE_INFINITY;

  constructor(publisher: StreamPublisher) {
    this.#publisher = publisher;
  }

  async produce(poll: PolledState<State, Delta>, times: PollTimes): Promise<AppliedPoll | undefined> {
    if (!('here' in poll))
      throw new Error('a relay alone numbers the changes of its own streams, not a whole state');
    if (times.askedAt < this.#askedAt) return undefined;
    this.#askedAt = times.askedAt;
    const { here } = poll;
    if (here.length === 0) return undefined;
    const span = times.trace?.child('numbering', { 'market_relay.streams': here.length });
    const { ts, rts, receivedAt } = times;
    let changed = false;
    let first = false;
    for (const { stream, change } of here) {
      first ||= change.delta === undefined;
      if (change.delta === null) this.#publisher.confirm(stream, rts, receivedAt);
      else if (this.#publisher.publishChange(stream, change, ts, rts, receivedAt, span)) changed = true;
    }
    span?.set({ 'market_relay.changed': changed });
    span?.end();
    return { receivedAt, changed, first };
  }

  async close(): Promise<boolean> {
    return true;
  }
}
