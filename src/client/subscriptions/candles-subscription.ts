/**
 * @module client/subscriptions/candles-subscription
 * A `candles` stream (docs/client.md "Candles"), held as the channel says
 * (src/channels/candles/subscription.ts), with the market, interval and source its id names.
 */
import { type CandleInterval, type CandleSource, candlesStreamOf } from '../../channels/candles/streams.ts';
import type { DefinedSnapshotMessage, DefinedUpdateMessage } from '../../protocol/messages.ts';
import { type DefinedEvents, DefinedSubscription } from './channel-subscriptions.ts';
import type { StreamHost } from './stream-subscription.ts';

export type { CandlesState } from '../../channels/registry.ts';
export type CandlesEvents = DefinedEvents<'candles'>;
export type CandlesSnapshotMessage = DefinedSnapshotMessage<'candles'>;
export type CandlesUpdateMessage = DefinedUpdateMessage<'candles'>;

export class CandlesSubscription extends DefinedSubscription<'candles'> {
  constructor(host: StreamHost, market: string) {
    super(host, market, 'candles');
  }

  /** The market, interval and source the stream id names. */
  get candles(): { market: string; interval: CandleInterval; source: CandleSource } {
    // The relay client only subscribes ids canonicalStreamId accepted.
    const stream = candlesStreamOf(this.market);
    if (stream === undefined) throw new TypeError(`not a candles stream: ${this.market}`);
    return stream;
  }
}
