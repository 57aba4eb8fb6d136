/**
 * @module client/subscriptions/channels/rest/subscription
 * A `rest` stream (docs/client.md "Any public path"): one of upstream's public GET paths, its state
 * the body as upstream served it, a plain JSON value, kept by applying each update's RFC 6902
 * JSON Patch and checked against each message's checksum (protocol.md "`rest` data"). A patch that
 * does not apply counts as a checksum mismatch: the stream resyncs from a new snapshot.
 */
import { applyPatch, restChecksum } from '../../../../../protocol/src/protocol/json-patch.ts';
import type {
  JsonValue,
  SnapshotMessageOf,
  UpdateMessageOf,
} from '../../../../../protocol/src/protocol/messages.ts';
import { StreamSubscription } from '../../stream-subscription.ts';

/** A `rest` stream's `snapshot` and `update` as the SDK names them. */
export type RestSnapshotMessage = SnapshotMessageOf<'rest'>;
export type RestUpdateMessage = UpdateMessageOf<'rest'>;

export class RestSubscription extends StreamSubscription<JsonValue, RestSnapshotMessage, RestUpdateMessage> {
  readonly channel = 'rest';
  readonly depth = undefined;
  /** The update just applied did not apply: its state cannot be trusted. */
  #broken = false;

  /** The canonical path (the stream id), as the relay spells it. */
  get path(): string {
    return this.market;
  }

  protected stateOf(snapshot: RestSnapshotMessage): JsonValue {
    return snapshot.data;
  }

  protected apply(state: JsonValue, update: RestUpdateMessage): JsonValue {
    try {
      this.#broken = false;
      return applyPatch(state, update.data);
    } catch {
      this.#broken = true;
      return state;
    }
  }

  protected override verify(state: JsonValue, message: RestSnapshotMessage | RestUpdateMessage): boolean {
    const broken = this.#broken;
    this.#broken = false;
    return !broken && restChecksum(state) === message.checksum;
  }
}
