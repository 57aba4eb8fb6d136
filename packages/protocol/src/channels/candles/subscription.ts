/**
 * @module channels/candles/subscription
 * How the SDK holds a `candles` stream (docs/client.md "Candles"): the most recent candles, oldest
 * first, kept by replacing each candle an update carries by its `start` and checked against each
 * message's checksum; `final` fires once per candle that closed, with the candle as it stays, and
 * `history` with the older candles a `since` snapshot brings beside them.
 */

import type { CandleFields } from '../candle-source.ts';
import type { HeldStream } from '../definition.ts';
import { applyCandlesUpdate, CANDLES_SNAPSHOT_SIZE, type CandlesData, candlesChecksum } from './candles.ts';

/** The candles of a stream, oldest first: at most as many as a snapshot carries. */
export type CandlesState<C extends CandleFields = CandleFields> = readonly C[];

/** The events a `candles` subscription adds to every stream's. */
export interface CandleEvents<C extends CandleFields = CandleFields> {
  /** A candle turned final (its interval ended): it never changes again. Once per `start`. */
  final: C;
  /**
   * The snapshot of a subscription with `since` came: the final candles of the range asked for
   * that are older than the state's, oldest first (docs/protocol.md "History since a time").
   */
  history: C[];
}

/**
 * What a subscription announces of the candles turned final, once per `start`: its first
 * snapshot's final candles are history; every candle after them that turns final is announced,
 * whether an update or a later snapshot (a resync, a reconnect, conflation) shows it.
 */
class FinalCandles<C extends CandleFields> {
  /** The starts of the candles announced final (bounded as the state is). */
  readonly #announced = new Set<string>();
  /** The start (ms) of the first candle that was not history when the stream's first snapshot came. */
  #heldFrom: number | undefined;

  /** The candles of an accepted message to announce, in its order. */
  announce(candles: readonly C[]): C[] {
    this.#heldFrom ??= firstHeld(candles);
    const heldFrom = this.#heldFrom;
    const fresh = candles.filter(
      (candle) => candle.final && !this.#announced.has(candle.start) && Date.parse(candle.start) >= heldFrom,
    );
    for (const candle of fresh) this.#announced.add(candle.start);
    while (this.#announced.size > 2 * CANDLES_SNAPSHOT_SIZE) {
      const oldest = this.#announced.values().next();
      if (!oldest.done) this.#announced.delete(oldest.value);
    }
    return fresh;
  }
}

/** Where a stream's first snapshot stops being history: its first open candle, or just after its last. */
function firstHeld(candles: readonly CandleFields[]): number {
  const open = candles.find((candle) => !candle.final);
  if (open !== undefined) return Date.parse(open.start);
  const last = candles.at(-1);
  return last === undefined ? Number.NEGATIVE_INFINITY : Date.parse(last.start) + 1;
}

/** A new subscription's hold of its stream. */
export function holdCandles<C extends CandleFields>(): HeldStream<
  CandlesData<C>,
  CandlesData<C>,
  CandlesState<C>,
  CandleEvents<C>
> {
  const finals = new FinalCandles<C>();
  return {
    stateOf: (snapshot) => snapshot.candles.slice(-CANDLES_SNAPSHOT_SIZE),
    apply: (state, update) => applyCandlesUpdate({ candles: [...state] }, update).candles,
    checksum: (state) => candlesChecksum({ candles: [...state] }),
    accepted(data, _state, emit) {
      if (data.history !== undefined) emit('history', data.history);
      for (const candle of finals.announce(data.candles)) emit('final', candle);
    },
  };
}
