/**
 * @module relay/pool/holders
 * Who holds each poll target, for the budget's fair share (relay/poll/share-groups.ts): the share
 * groups of the subscribers of the streams its request serves, each counted once. A subscriber
 * counts as its owner (`ownerOf`: its API key or its client address group, as the relay wires it).
 * Kept up to date by stream id as subscribers come and go, never by a walk over every target:
 * the changes since the last turn are applied before the dispatcher chooses again.
 */
import type { Channel } from '../../../packages/protocol/src/protocol/messages.ts';
import type { AnyStream, StreamSubscriber } from '../streams/stream.ts';

/** The distinct owners of the subscribers of `streams`. */
export function holdersOf(
  streams: Iterable<AnyStream>,
  ownerOf: (subscriber: StreamSubscriber) => unknown,
): unknown[] {
  const owners = new Set<unknown>();
  for (const stream of streams) for (const subscriber of stream.subscribers) owners.add(ownerOf(subscriber));
  return [...owners];
}

/** The stream ids whose subscribers changed since the holders were last brought up to date. */
export class HolderChanges<Batch> {
  readonly #changed = new Map<string, { channel: Channel; id: string }>();
  readonly #rebatched = new Set<Batch>();

  /** A subscriber came to or left a stream of `channel` for `id`. */
  add(channel: Channel, id: string): void {
    this.#changed.set(`${channel}\u0000${id}`, { channel, id });
  }

  /** These price batches' markets changed: their holders are made again. */
  pricesRebatched(batches: Iterable<Batch>): void {
    for (const batch of batches) this.#rebatched.add(batch);
  }

  /** What changed, then forgotten. */
  take(): { changed: { channel: Channel; id: string }[]; rebatched: Batch[] } {
    const taken = { changed: [...this.#changed.values()], rebatched: [...this.#rebatched] };
    this.#changed.clear();
    this.#rebatched.clear();
    return taken;
  }
}
