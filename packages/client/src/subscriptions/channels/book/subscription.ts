/**
 * @module client/subscriptions/channels/book/subscription
 * A `book` stream as the application holds it (docs/client.md "API"): the depth and group it asks
 * for, checked before anything is sent, its state with each update applied and its checksum
 * verified, and its move to another depth in place. Sequencing, resync and status are the base
 * class's (../../stream-subscription.ts).
 */
import { applyBookUpdate, type BookState, bookChecksum } from '../../../../../protocol/src/protocol/book.ts';
import { groupExpected, offeredGroup } from '../../../../../protocol/src/protocol/group.ts';
import type { SnapshotMessageOf, UpdateMessageOf } from '../../../../../protocol/src/protocol/messages.ts';
import { type BookDepth, bookDepths } from '../../../../../protocol/src/protocol/messages.ts';
import { RelayClientError } from '../../../events/client-error.ts';
import { type StreamHost, StreamSubscription } from '../../stream-subscription.ts';

/** A `book` stream's `snapshot` and `update` as the SDK names them. */
export type BookSnapshotMessage = SnapshotMessageOf<'book'>;
export type BookUpdateMessage = UpdateMessageOf<'book'>;

/**
 * The stream depth an application asks for: 1, 5, 10, 25 or 50 levels a side; `'full'`, null or
 * nothing is the full book (null on the wire). Any other depth throws a TypeError.
 */
export function streamDepth(asked: BookDepth | 'full' | undefined): BookDepth {
  const wanted: unknown = asked ?? null;
  if (wanted === null || wanted === 'full') return null;
  const depth = bookDepths.find((offered) => offered === wanted);
  if (depth === undefined)
    throw new TypeError(`depth must be ${bookDepths.join(', ')}, 'full' or null, got ${String(wanted)}`);
  return depth;
}

/**
 * The group step an application asks for (docs/protocol.md "Grouped books"): one of `bookGroups` in
 * any decimal spelling, read as the relay's; undefined is the book ungrouped. Any other throws a TypeError.
 */
export function streamGroup(asked: string | undefined): string | undefined {
  if (asked === undefined) return undefined;
  const group = offeredGroup(asked);
  if (group === undefined) throw new TypeError(`group: ${groupExpected}, got ${JSON.stringify(asked)}`);
  return group;
}

/**
 * A `book` stream: state is `{ bids, asks, last_price }` with exact decimal strings, best first;
 * with a `group`, the levels summed into multiples of that step (bids down, asks up).
 */
export class BookSubscription extends StreamSubscription<BookState, BookSnapshotMessage, BookUpdateMessage> {
  readonly channel = 'book';
  #depth: BookDepth;
  readonly #group: string | undefined;
  readonly #host: StreamHost;

  constructor(host: StreamHost, market: string, depth: BookDepth, group?: string) {
    super(host, market);
    this.#host = host;
    this.#depth = depth;
    this.#group = group;
  }

  get depth(): BookDepth {
    return this.#depth;
  }

  override get group(): string | undefined {
    return this.#group;
  }

  /**
   * Moves this stream to another depth at the relay, without unsubscribing (docs/client.md):
   * resolves on the relay's `subscribed`, rejects with its error; `depth` changes then, and the
   * state is rebuilt from the new depth's snapshot. A depth `subscribeBook` refuses throws a
   * `TypeError` here too, before anything is sent.
   */
  update(options: { depth: BookDepth | 'full' }): Promise<void> {
    const depth = streamDepth(options.depth);
    const from = { channel: 'book' as const, market: this.market, depth: this.#depth, group: this.#group };
    if (this.#host.changeDepth === undefined)
      return Promise.reject(new RelayClientError('bad_request', 'this stream cannot change its depth'));
    return this.#host.changeDepth(from, depth, () => {
      if (depth === this.#depth) return;
      this.#depth = depth;
      this.awaitSnapshot();
    });
  }

  protected stateOf(snapshot: BookSnapshotMessage): BookState {
    return snapshot.data;
  }

  protected apply(state: BookState, update: BookUpdateMessage): BookState {
    return applyBookUpdate(state, update.data);
  }

  protected override verify(state: BookState, message: BookSnapshotMessage | BookUpdateMessage): boolean {
    return bookChecksum(state) === message.checksum;
  }
}
