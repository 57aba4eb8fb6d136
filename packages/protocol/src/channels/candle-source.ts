/**
 * @module channels/candle-source
 * A source of candle streams as a capability a channel may offer (the wire form: docs/protocol.md):
 * its name in stream ids, and the check of the candle it makes. Node-free. The candle channel's
 * folder offers `probability` and is generic over the list ./registry.ts composes; the server
 * reads a source through relay/channels/relay-candle-source.ts.
 */
import type { Fields } from '../util/field-checks.ts';
import type { SinceCheck } from './history.ts';

/**
 * What every candle has: `start`, the interval's start (ISO 8601 UTC with ms); `final` once the
 * interval has ended and the relay has read upstream since, after which the candle never changes.
 */
export interface CandleFields {
  start: string;
  final: boolean;
}

/** A candle source: its name in stream ids, and whether a candle's values are its kind. */
export interface CandleSourceOf<N extends string = string> {
  readonly name: N;
  /** Whether `candle` (whose `start` and `final` were checked) carries this source's values. */
  isCandle(candle: Fields): boolean;
  /**
   * Of a source whose history a stream's `since` may ask for (docs/protocol.md "History since a
   * time"): the check of a `since` at time `now`, as its channel checks one.
   */
  since?(value: unknown, now: number): SinceCheck;
}
