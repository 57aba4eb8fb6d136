/**
 * @module client/subscriptions/channels/markets/subscription
 * A `markets` stream as the application holds it (docs/client.md "The market catalogue"): every
 * market's list-form record by id, each update applied, and `listed` and `delisted` as markets
 * come and go.
 */
import { applyMarketsUpdate } from '../../../../../protocol/src/channels/markets/wire.ts';
import type {
  MarketListRecord,
  MarketsData,
  SnapshotMessageOf,
  UpdateMessageOf,
} from '../../../../../protocol/src/protocol/messages.ts';
import { type StreamEvents, StreamSubscription } from '../../stream-subscription.ts';

/** A `markets` stream's `snapshot` and `update` as the SDK names them. */
export type MarketsSnapshotMessage = SnapshotMessageOf<'markets'>;
export type MarketsUpdateMessage = UpdateMessageOf<'markets'>;

/**
 * A `markets` stream (`market` is the catalogue's filter: `all`, `active` ...): every market's
 * list-form record by id; `listed` fires for each market new to it and `delisted` for each that left.
 */
export class MarketsSubscription extends StreamSubscription<
  MarketsData,
  MarketsSnapshotMessage,
  MarketsUpdateMessage,
  StreamEvents<MarketsData, MarketsSnapshotMessage, MarketsUpdateMessage> & {
    listed: MarketListRecord;
    delisted: { market: string };
  }
> {
  readonly channel = 'markets';
  readonly depth = undefined;
  #previous: MarketsData | undefined;

  protected stateOf(snapshot: MarketsSnapshotMessage): MarketsData {
    return snapshot.data;
  }

  protected apply(state: MarketsData, update: MarketsUpdateMessage): MarketsData {
    this.#previous = state;
    return applyMarketsUpdate(state, update.data);
  }

  /** An update's new and removed markets, in the update's order; a snapshot announces none. */
  protected override accepted(message: MarketsSnapshotMessage | MarketsUpdateMessage): void {
    const before = this.#previous;
    this.#previous = undefined;
    if (message.type !== 'update' || before === undefined) return;
    for (const [market, record] of Object.entries(message.data)) {
      if (record === null) this.emit('delisted', { market });
      else if (!Object.hasOwn(before, market)) this.emit('listed', record);
    }
  }
}
