/**
 * @module client/subscriptions/candles-subscription
 * A `candles` stream (docs/client.md "Candles"): one market's candles of one interval and source,
 * the most recent ones oldest first, kept by replacing each candle an update carries by its `start`
 * and checked against each message's checksum (protocol.md "`candles` data"). `final` fires once
 * per candle that closed, with the candle as it stays.
 */
import {
  applyCandlesUpdate,
  CANDLES_SNAPSHOT_SIZE,
  type Candle,
  candlesChecksum,
} from '../../channels/candles/candles.ts';
import { type CandleInterval, type CandleSource, candlesStreamOf } from '../../channels/candles/streams.ts';
import type { DefinedSnapshotMessage, DefinedUpdateMessage } from '../../protocol/messages.ts';
import { type StreamEvents, StreamSubscription } from './stream-subscription.ts';

export type CandlesSnapshotMessage = DefinedSnapshotMessage<'candles'>;
export type CandlesUpdateMessage = DefinedUpdateMessage<'candles'>;

/** The candles of a stream, oldest first: at most as many as a snapshot carries. */
export type CandlesState = readonly Candle[];

export interface CandlesEvents
  extends StreamEvents<CandlesState, CandlesSnapshotMessage, CandlesUpdateMessage> {
  /** A candle turned final (its interval ended): it never changes again. Once per `start`. */
  final: Candle;
}

export class CandlesSubscription extends StreamSubscription<
  CandlesState,
  CandlesSnapshotMessage,
  CandlesUpdateMessage,
  CandlesEvents
> {
  readonly channel = 'candles';
  readonly depth = undefined;
  /** The starts of the candles announced final (bounded as the state is). */
  readonly #announced = new Set<string>();
  /** The start (ms) of the first candle that was not history when the stream's first snapshot came. */
  #heldFrom: number | undefined;

  /** The market, interval and source the stream id names. */
  get candles(): { market: string; interval: CandleInterval; source: CandleSource } {
    // The relay client only subscribes ids canonicalStreamId accepted.
    const stream = candlesStreamOf(this.market);
    if (stream === undefined) throw new TypeError(`not a candles stream: ${this.market}`);
    return stream;
  }

  protected stateOf(snapshot: CandlesSnapshotMessage): CandlesState {
    return snapshot.data.candles.slice(-CANDLES_SNAPSHOT_SIZE);
  }

  protected apply(state: CandlesState, update: CandlesUpdateMessage): CandlesState {
    return applyCandlesUpdate({ candles: [...state] }, update.data).candles;
  }

  protected override verify(
    state: CandlesState,
    message: CandlesSnapshotMessage | CandlesUpdateMessage,
  ): boolean {
    return candlesChecksum({ candles: [...state] }) === message.checksum;
  }

  /**
   * The first snapshot's final candles are history; every candle after them that turns final is
   * announced, whether an update or a later snapshot (a resync, a reconnect, conflation) shows it.
   */
  protected override accepted(message: CandlesSnapshotMessage | CandlesUpdateMessage): void {
    const { candles } = message.data;
    this.#heldFrom ??= heldFrom(candles);
    for (const candle of candles) {
      if (!candle.final || this.#announced.has(candle.start) || Date.parse(candle.start) < this.#heldFrom)
        continue;
      this.#announced.add(candle.start);
      this.emit('final', candle);
    }
    while (this.#announced.size > 2 * CANDLES_SNAPSHOT_SIZE) {
      const oldest = this.#announced.values().next();
      if (!oldest.done) this.#announced.delete(oldest.value);
    }
  }
}

/** Where a stream's first snapshot stops being history: its first open candle, or just after its last. */
function heldFrom(candles: readonly Candle[]): number {
  const open = candles.find((candle) => !candle.final);
  if (open !== undefined) return Date.parse(open.start);
  const last = candles.at(-1);
  return last === undefined ? Number.NEGATIVE_INFINITY : Date.parse(last.start) + 1;
}
