/**
 * @module relay/channels/relay-candle-source
 * A source of candle streams on the server (channels/candle-source.ts): how its samples build a candle
 * (the candle channel's series files them), how a stream of it reads them per poll (the channel's
 * keeper runs it), and what a cluster's lease holder shares of it. The candle channel's folder
 * offers `probability`; a channel with samples of its own offers its source from its folder, and
 * ./relay-registry.ts composes them.
 */
import type { z } from 'zod';
import type { Channel } from '../../../packages/protocol/src/protocol/channels.ts';
import type { Fields } from '../../../packages/protocol/src/util/field-checks.ts';
import type { EventArgs, KeptPoll, ServesHistory } from './relay-definition.ts';

/** A sample of any source: a value at its upstream time (ms), and whatever its source sums. */
export interface CandleSample {
  at: number;
}

/**
 * How one source's samples build a candle, free of I/O: which samples and candle values are its,
 * a sample's value and how two compare (in the value's own type), and what its candle sums beyond
 * its prices, if anything. (Methods, so that a list holds sources of different samples.)
 */
export interface SeriesSource<S extends CandleSample = CandleSample, V = unknown> {
  takes(sample: CandleSample): sample is S;
  holds(candle: Fields): boolean;
  value(sample: S): V;
  compare(a: V, b: V): number;
  /** The totals of a candle opened by `sample` (empty for a source that sums nothing). */
  first(sample: S): Fields;
  /** The totals of `candle` (of this source) once it takes `sample` in. */
  added(candle: Fields, sample: S): Fields;
}

/** The stream a source reads for: its market, and its interval by name and length (ms). */
export interface SourcedStream {
  market: string;
  interval: string;
  intervalMs: number;
}

export interface RelayCandleSource<
  Upstream,
  EventMap extends EventArgs<EventMap>,
  S extends CandleSample = CandleSample,
  V = unknown,
> extends SeriesSource<S, V> {
  /** Its name in stream ids. */
  readonly name: string;
  /** A candle's values (prices, then its totals) as the lease holder shares them, checked again on arrival. */
  readonly sharedValues: z.ZodRawShape;
  /** The ids the lease holder shares beside its series so that no sample counts twice (none for a source that needs none). */
  readonly sharedSeen: z.ZodType<string[]>;
  /** What a new stream of this source keeps between polls. */
  reader(stream: SourcedStream): SampleReader<Upstream, EventMap>;
  /**
   * Of a source whose history a stream's `since` may ask for (its `since`, channels/candle-source.ts):
   * its samples of a market since a time, oldest first, each counted once, read as a channel reads
   * its history (each upstream request through the budget's `request`).
   */
  readonly history?: ServesHistory<Upstream, unknown, { samples: S[] }>['read'];
  /**
   * Of a source whose `history` reads another stream's record alone, never upstream: that stream
   * of the market (a `since` is answered so only where its record reaches back to the range's start).
   */
  recordOf?(market: string): { channel: Channel; streamId: string };
}

/** What the stream's keeper knows of the stream when a poll reads it. */
export interface KeptSoFar {
  /** Whether the backfill was read (here, or by the lease holder whose series this one carries on). */
  backfilled: boolean;
  /** When the last read applied here was asked (or the lease holder's received). */
  appliedAt: number | undefined;
}

/** One stream's reads of its source. */
export interface SampleReader<Upstream, EventMap extends EventArgs<EventMap>> {
  /**
   * The samples a poll read, oldest first, and what taking them changes, done only once they were
   * applied (a response applied too late must not mark its samples counted).
   */
  read(
    poll: KeptPoll<Upstream, EventMap>,
    kept: KeptSoFar,
  ): Promise<{ samples: CandleSample[]; taken: () => void }>;
  /** The ids the lease holder shares (see `sharedSeen`). */
  readonly seen: readonly string[];
  /** The lease holder's ids taken over with its series, whose newest candle closes at `newest` (ms). */
  takeShared(seen: readonly string[], newest: number): void;
}
