/**
 * @module client/subscriptions/channels/price/subscription
 * A `price` stream as the application holds it (docs/client.md "API"): upstream's decimal strings
 * per field, each update applied, and its `interval` and `threshold` changed in place.
 */

import { applyPriceUpdate } from '../../../../../protocol/src/channels/price/price.ts';
import type {
  PriceData,
  SnapshotMessageOf,
  UpdateMessageOf,
} from '../../../../../protocol/src/protocol/messages.ts';
import { RelayClientError } from '../../../events/client-error.ts';
import { checkedInterval, checkedThreshold } from '../../options.ts';
import { type StreamHost, type StreamOptions, StreamSubscription } from '../../stream-subscription.ts';

/** A `price` stream's `snapshot` and `update` as the SDK names them. */
export type PriceSnapshotMessage = SnapshotMessageOf<'price'>;
export type PriceUpdateMessage = UpdateMessageOf<'price'>;

/** A `price` stream: state is upstream's decimal strings per field; a field upstream omits is absent. */
export class PriceSubscription extends StreamSubscription<
  PriceData,
  PriceSnapshotMessage,
  PriceUpdateMessage
> {
  readonly channel = 'price';
  readonly depth = undefined;
  readonly #host: StreamHost;

  constructor(host: StreamHost, market: string) {
    super(host, market);
    this.#host = host;
  }

  /**
   * Changes this stream's `interval` and `threshold` at the relay in place (an `update`; docs/
   * client.md): null clears one, absent leaves it. Resolves on the relay's `subscribed`, rejects
   * with its error; a value the relay would refuse throws, as `subscribePrice` does.
   */
  update(options: StreamOptions): Promise<void> {
    const { interval, threshold } = options;
    const checked: StreamOptions = {
      ...(interval === undefined ? {} : { interval: interval === null ? null : checkedInterval(interval) }),
      ...(threshold === undefined
        ? {}
        : { threshold: threshold === null ? null : checkedThreshold(threshold) }),
    };
    if (this.#host.changeOptions === undefined)
      return Promise.reject(new RelayClientError('bad_request', 'this stream cannot change its options'));
    return this.#host.changeOptions(this, checked);
  }

  protected stateOf(snapshot: PriceSnapshotMessage): PriceData {
    return snapshot.data;
  }

  protected apply(state: PriceData, update: PriceUpdateMessage): PriceData {
    return applyPriceUpdate(state, update.data);
  }
}
