/**
 * @module relay/coordination/local/broker
 * The broker of a relay alone: it holds every lease, numbers its own streams
 * (relay/coordination/local/numbering.ts), keeps its history in its own resume rings, has nobody to
 * share with, and keeps to `--upstream-rps` by itself.
 */
import { LocalRateGate, type RateGate } from '../../../upstream/rate-gate.ts';
import { RINGS_ALONE } from '../../streams/registry.ts';
import type { Broker, BrokerCounter, BrokerGauge, BrokerStatus, ClusterReport } from '../broker.ts';
import type { NumberedCodec } from '../codecs.ts';
import type { SharedResult } from '../shared-result.ts';
import type { NumberingContext, StreamNumbering } from '../stream-numbering.ts';
import { LocalNumbering } from './numbering.ts';

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
  ): StreamNumbering<State> {
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
