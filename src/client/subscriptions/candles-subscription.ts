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
  FinalCandles,
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
  readonly #finals = new FinalCandles();

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

  protected override accepted(message: CandlesSnapshotMessage | CandlesUpdateMessage): void {
    for (const candle of this.#finals.announce(message.data.candles)) this.emit('final', candle);
  }
}
