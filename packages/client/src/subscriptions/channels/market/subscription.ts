/**
 * @module client/subscriptions/channels/market/subscription
 * A `market` stream as the application holds it (docs/client.md "API"): upstream's detail record,
 * each update applied, and `closed` once the market leaves ACTIVE.
 */
import { applyMarketUpdate } from '../../../../../protocol/src/channels/market/wire.ts';
import type {
  MarketData,
  SnapshotMessageOf,
  UpdateMessageOf,
} from '../../../../../protocol/src/protocol/messages.ts';
import { type StreamEvents, StreamSubscription } from '../../stream-subscription.ts';

/** A `market` stream's `snapshot` and `update` as the SDK names them. */
export type MarketSnapshotMessage = SnapshotMessageOf<'market'>;
export type MarketUpdateMessage = UpdateMessageOf<'market'>;

/** upstream's status of a market that accepts trading (docs/upstream.md "Market status"). */
const ACTIVE = 'ACTIVE';

export interface MarketEvents extends StreamEvents<MarketData, MarketSnapshotMessage, MarketUpdateMessage> {
  /**
   * The market left ACTIVE (expired, resolved): `status` is its new upstream status. Fires once;
   * the relay then closes the stream (subscription status `closed`).
   */
  closed: { status: string; state: MarketData };
}

/** A `market` stream: state is upstream's market detail record, each field with upstream's type. */
export class MarketSubscription extends StreamSubscription<
  MarketData,
  MarketSnapshotMessage,
  MarketUpdateMessage,
  MarketEvents
> {
  readonly channel = 'market';
  readonly depth = undefined;
  #announcedClose = false;

  protected stateOf(snapshot: MarketSnapshotMessage): MarketData {
    return snapshot.data;
  }

  protected apply(state: MarketData, update: MarketUpdateMessage): MarketData {
    return applyMarketUpdate(state, update.data);
  }

  protected override accepted(
    _message: MarketSnapshotMessage | MarketUpdateMessage,
    state: MarketData,
  ): void {
    const status = state.status;
    if (this.#announcedClose || typeof status !== 'string' || status === ACTIVE) return;
    this.#announcedClose = true;
    this.emit('closed', { status, state });
  }
}
