/**
 * @module channels/relay-definition
 * What a channel declares of its server part: how two of its states are diffed (its codec) and, for
 * a channel polled one upstream request per stream id, that request and how its response becomes
 * the channel's state, or what each stream keeps across polls, or, for a channel served from a
 * market's order book, its state of that book. The relay runs every such channel through the same
 * code (relay/channels/codecs.ts, relay/targets/defined-target.ts, kept-target.ts and
 * book-target.ts); ./relay-registry.ts lists them.
 */
import type { z } from 'zod';
import type { OrderBook } from '../upstream/schemas.ts';

/** A diff's answer that the state changed but is best sent whole, as a snapshot with the next `seq`. */
export const sendWhole: unique symbol = Symbol('send the state whole');

/** How a channel's states are compared and described on the wire. */
export interface StreamCodec<State, Delta> {
  /** The update from `prev` to `next`; null when nothing changed. */
  diff(prev: State, next: State): Delta | null | typeof sendWhole;
  /** Book and rest streams carry a checksum of the state after each message. */
  checksum?(state: State): number;
  /**
   * Whether an update that would be larger than the snapshot of the state it leads to goes out as
   * that snapshot instead (`rest`, whose patches of an arbitrary body may outgrow it; the other
   * channels' updates are a part of their state).
   */
  noUpdateLargerThanSnapshot?: boolean;
}

/** A channel polled one upstream request per stream id, whatever the number of its subscribers. */
export interface PolledPerStream<Upstream, Response, State> {
  /** The upstream request of one poll. */
  ask(upstream: Upstream, streamId: string): Promise<Response>;
  /** How a shared response is validated again on arrival (the endpoint's own schema). */
  readonly schema: z.ZodType<Response>;
  /** The channel's state of a response. */
  stateOf(response: Response): State;
  /** Upstream's time of the response's data, ISO 8601 with ms; undefined: the receive time. */
  tsOf(response: Response): string | undefined;
}

/**
 * A map that answers for every market in one request and doubles as the books' change hints
 * (relay/targets/change-hints.ts): a market whose entry differs from the previous answer's has
 * moved at the top of its book. ./relay-registry.ts names the channel whose polls read it.
 */
export interface ChangeHintMap<Upstream, Response, Entry> {
  /** The map's own request, made while no stream of the channel polls it anyway. */
  ask(upstream: Upstream): Promise<Response>;
  /** Each market of the map (its id in lower case) with its entry. */
  entries(response: Response): Iterable<readonly [market: string, entry: Entry]>;
  /** What of an entry moves with the market's top of book, as one string to compare. */
  fingerprint(entry: Entry): string;
}

/**
 * A channel whose streams of a market are served by the market's book target
 * (relay/targets/book-target.ts), from the one request that serves its `book` streams.
 */
export interface ServedFromBook<State> {
  /** The channel's state of upstream's book (the whole book, every entry parsed). */
  stateOf(book: OrderBook): State;
}

/**
 * What one stream of a channel polled per stream id keeps between polls, each poll's reads merged
 * into it rather than replacing it (a series grown from upstream's history). In cluster mode the
 * lease holder shares it whole after each poll, and the others publish it and carry on from it.
 */
export interface StreamKeeper<Upstream, State> {
  /** The market whose absence upstream (the poll's first request refused) ends the stream. */
  readonly market: string;
  /** The channel's state of what is kept. */
  readonly state: State;
  /** One poll's reads, merged in only by `apply` once they are known to be the newest. */
  read(poll: KeptPoll<Upstream>): Promise<KeptRead>;
  /** What the lease holder shares after a poll applied. */
  shared(): unknown;
  /** A peer's share taken over (validated here: nothing from the wire is trusted); false when invalid. */
  takeShared(body: unknown, receivedAt: number): boolean;
}

/** One poll of a kept stream. */
export interface KeptPoll<Upstream> {
  readonly upstream: Upstream;
  /** When the poll was asked. */
  readonly askedAt: number;
  /** Hears of each request before it goes out (a refusal of a later page is not about the market). */
  onRequest(): void;
  /** A walk of a listing stopped at its entry bound before reaching what it had read: entries were lost. */
  onTruncated(pages: number): void;
}

export interface KeptRead {
  /** Merges the read in (a response applied too late must change nothing, so only now). */
  apply(): void;
}

/**
 * A bound on the distinct streams of a channel that one connection, and one client address group's
 * connections together, may hold (docs/operations.md "Isolation"), for streams that cost the most
 * to start and keep. Its two limits are the relay's options `--max-<option>` and
 * `--max-<option>-per-address`, read into the fields `Limits` names.
 */
export interface GroupBound<Limits> {
  /** The streams as a refusal and `--help` name them. */
  readonly noun: string;
  /** The streams as docs/operations.md's table names them (markdown). */
  readonly doc: string;
  /** The options' stem. */
  readonly option: string;
  /** The limits' fields in the relay's isolation limits, and their defaults. */
  readonly perConnection: { readonly field: keyof Limits; readonly default: number };
  readonly perAddress: { readonly field: keyof Limits; readonly default: number };
}

/** The server part of a channel whose state is `State` and whose update carries `Delta`. */
export interface RelayChannel<Upstream, State, Delta, Limits = unknown> {
  readonly codec: StreamCodec<State, Delta>;
  /** Absent for a channel polled another way (a book's targets, a price batch). */
  readonly polled?: PolledPerStream<Upstream, unknown, State>;
  /** Present for a channel served from its market's order book. */
  readonly fromBook?: ServedFromBook<State>;
  /** A channel polled per stream id whose state each poll grows (relay/targets/kept-target.ts). */
  readonly kept?: (streamId: string) => StreamKeeper<Upstream, State>;
  /** A channel whose distinct streams are bounded per connection and per address group. */
  readonly groupBound?: GroupBound<Limits>;
}
