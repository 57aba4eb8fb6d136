/**
 * @module relay/session/recording-holds
 * The streams `--record` names, held with no client so that they are polled and recorded
 * (docs/history.md "Recording with no subscriber"). The relay's own subscriber, like a session's
 * wildcards: it is no client and no subscription in the counts, and its streams are polled through
 * the scheduler and the budget like any other, as one holder of its own share. `<channel>:*` holds
 * every market upstream's catalogue lists as active, now and later, by following the catalogue's
 * `active` stream; `<channel>:<id>` holds that stream. A stream that ends (its market closed) is
 * let go; a `*` market that leaves the catalogue is let go too.
 */
import type { Channel, MarketsData } from '../../../packages/protocol/src/protocol/messages.ts';
import { activeCatalogue } from '../channels/relay-registry.ts';
import type { Frame } from '../streams/frame.ts';
import type { StreamRegistry } from '../streams/registry.ts';
import type { AnyStream, StreamSubscriber } from '../streams/stream.ts';
import { activeMarkets } from './wildcard.ts';

/** One `--record` item: a channel and its stream ids, or `*` for every active market. */
export interface RecordSelection {
  channel: Channel;
  /** Stream ids, or `['*']`. */
  markets: readonly string[];
}

export class RecordingHolds implements StreamSubscriber {
  readonly internal = true;
  readonly #registry: StreamRegistry;
  /** The channels held for every active market. */
  readonly #everyActive: readonly Channel[];
  /** Every stream held, by stream key. */
  readonly #held = new Map<string, AnyStream>();
  /** The `*` streams held, by market: let go when the market leaves the catalogue. */
  readonly #byActiveMarket = new Map<string, AnyStream[]>();
  #catalogue: AnyStream | undefined;
  #active: readonly string[] | undefined;

  constructor(registry: StreamRegistry, selections: readonly RecordSelection[]) {
    this.#registry = registry;
    this.#everyActive = selections
      .filter(({ markets }) => markets.includes('*'))
      .map(({ channel }) => channel);
    for (const { channel, markets } of selections)
      for (const market of markets) if (market !== '*') this.#hold(channel, market);
    if (this.#everyActive.length > 0) {
      this.#catalogue = registry.subscribe(this, activeCatalogue);
      this.#follow();
    }
  }

  /** How many streams are held for recording. */
  get size(): number {
    return this.#held.size;
  }

  deliver(stream: AnyStream): void {
    if (stream === this.#catalogue) this.#follow();
  }

  notify(_stream: AnyStream, _frame: Frame): void {}

  ended(stream: AnyStream): void {
    if (stream === this.#catalogue) this.#catalogue = undefined;
    this.#held.delete(stream.key);
  }

  /** Lets every stream go (shutdown). */
  close(): void {
    for (const stream of this.#held.values()) this.#registry.unsubscribe(this, stream);
    this.#held.clear();
    this.#byActiveMarket.clear();
    if (this.#catalogue !== undefined) this.#registry.unsubscribe(this, this.#catalogue);
    this.#catalogue = undefined;
  }

  /** Holds the streams of markets that became active and lets go of those that left. */
  #follow(): void {
    const catalogue = this.#catalogue;
    if (catalogue === undefined || !catalogue.hasState) return;
    const active = activeMarkets(catalogue.state as MarketsData);
    if (active === this.#active) return;
    this.#active = active;
    const now = new Set(active);
    for (const [market, streams] of this.#byActiveMarket) {
      if (now.has(market)) continue;
      for (const stream of streams) this.#letGo(stream);
      this.#byActiveMarket.delete(market);
    }
    for (const market of active) {
      if (this.#byActiveMarket.has(market)) continue;
      this.#byActiveMarket.set(
        market,
        this.#everyActive.flatMap((channel) => this.#hold(channel, market) ?? []),
      );
    }
  }

  #hold(channel: Channel, market: string): AnyStream | undefined {
    if (this.#registry.unknownMarkets.has(market)) return undefined;
    const stream = this.#registry.subscribe(this, { channel, market }) as AnyStream;
    this.#held.set(stream.key, stream);
    return stream;
  }

  #letGo(stream: AnyStream): void {
    if (this.#held.delete(stream.key)) this.#registry.unsubscribe(this, stream);
  }
}
