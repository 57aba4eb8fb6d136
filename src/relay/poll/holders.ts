/**
 * @module relay/poll/holders
 * Who holds each poll target, for the budget's fair share (relay/poll/share-groups.ts): the share
 * groups of the subscribers of the streams its request serves, each counted once. A subscriber
 * counts as its owner (`ownerOf`: its API key or its client address group, as the relay wires it).
 * Kept up to date by stream id as subscribers come and go, never by a walk over every target:
 * the changes since the last turn are applied before the dispatcher chooses again, at most every
 * HOLDERS_REFRESH_MS for one stream id.
 */
import type { Channel } from '../../../packages/protocol/src/protocol/messages.ts';
import type { AnyStream, StreamSubscriber } from '../streams/stream.ts';

/** The distinct owners of the subscribers of `streams`. */
export function holdersOf(
  streams: Iterable<AnyStream>,
  ownerOf: (subscriber: StreamSubscriber) => unknown,
): Set<unknown> {
  const owners = new Set<unknown>();
  for (const stream of streams) for (const subscriber of stream.subscribers) owners.add(ownerOf(subscriber));
  return owners;
}

/**
 * How long after a target's holders were made again a further change to them waits. A target a
 * wildcard holds has hundreds of holders and a change on nearly every turn while clients come and
 * go; making its holders again on each of those turns was the largest part of the relay's own
 * work on its event loop and of what it allocated (a set of hundreds per target per turn), in a
 * profile of the long soak (issue 51). The shares are measured over USAGE_WINDOW_MS (10 s,
 * relay/poll/share-groups.ts): holders half a second late move no share measurably.
 */
export const HOLDERS_REFRESH_MS = 500;

/**
 * The stream ids whose subscribers changed since the holders were last brought up to date: each
 * taken at the first turn after it changed, unless it was taken within HOLDERS_REFRESH_MS, when it
 * waits for the first turn after that.
 */
export class HolderChanges<Target> {
  readonly #changed = new Map<string, { channel: Channel; id: string }>();
  readonly #rebatched = new Set<Target>();
  /** Stream ids taken within HOLDERS_REFRESH_MS -> when; in the order taken, so oldest first. */
  readonly #taken = new Map<string, number>();

  /** A subscriber came to or left a stream of `channel` for `id`. */
  add(channel: Channel, id: string): void {
    this.#changed.set(`${channel}\u0000${id}`, { channel, id });
  }

  /** These targets' served streams changed (a price batch's markets): their holders are made again. */
  regroup(targets: Iterable<Target>): void {
    for (const target of targets) this.#rebatched.add(target);
  }

  /** Stream ids changed and not taken within HOLDERS_REFRESH_MS, and the rebatched; then forgotten. */
  take(now: number): { changed: { channel: Channel; id: string }[]; rebatched: Target[] } {
    for (const [key, takenAt] of this.#taken) {
      if (now - takenAt < HOLDERS_REFRESH_MS) break;
      this.#taken.delete(key);
    }
    const changed: { channel: Channel; id: string }[] = [];
    for (const [key, change] of this.#changed) {
      if (this.#taken.has(key)) continue;
      changed.push(change);
      this.#changed.delete(key);
      this.#taken.set(key, now);
    }
    const rebatched = [...this.#rebatched];
    this.#rebatched.clear();
    return { changed, rebatched };
  }
}
