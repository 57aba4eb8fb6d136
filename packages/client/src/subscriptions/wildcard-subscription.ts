/**
 * @module client/subscriptions/wildcard-subscription
 * A `"*"` subscription (docs/client.md "Every active market"): on a wildcard channel
 * (channels/registry.ts `wildcardChannels`), every market upstream's catalogue lists as active, now
 * and later. The relay announces the
 * markets it joins and leaves (protocol.md "Wildcard subscriptions"); this object turns each
 * announcement into a stream the application gets through `added` and, when the market is no
 * longer active, ends it and says so through `removed`. The streams are ordinary subscriptions of
 * their channel (state, events, resync), held by the client but subscribed through the `"*"`.
 */
import { type DefinedChannel, isDefinedChannel } from '../../../protocol/src/channels/registry.ts';
import type { WildcardChannel } from '../../../protocol/src/protocol/channels.ts';
import { WILDCARD } from '../../../protocol/src/protocol/channels.ts';
import type {
  ResumePoint,
  SubscribedMessage,
  UnsubscribedMessage,
} from '../../../protocol/src/protocol/messages.ts';
import type { RelayClientError } from '../events/client-error.ts';
import { Emitter } from '../events/emitter.ts';
import { DefinedSubscription } from './channel-subscriptions.ts';
import { MarketSubscription } from './channels/market/subscription.ts';
import { PriceSubscription } from './channels/price/subscription.ts';
import type { StreamHost } from './stream-subscription.ts';
import type { SubscribeBody, UnsubscribeBody } from './subscriptions.ts';

/** The streams of the wildcard channels without a folder of their own. */
interface PlainWildcardStreams {
  price: PriceSubscription;
  market: MarketSubscription;
}

const plainStreamKinds: {
  [C in keyof PlainWildcardStreams]: new (
    host: StreamHost,
    market: string,
  ) => PlainWildcardStreams[C];
} = { price: PriceSubscription, market: MarketSubscription };

/** The stream each wildcard channel's markets come as. */
export type WildcardStreams = {
  [C in WildcardChannel]: C extends DefinedChannel
    ? DefinedSubscription<C>
    : C extends keyof PlainWildcardStreams
      ? PlainWildcardStreams[C]
      : never;
};

/** A stream of a wildcard channel, for `market` (its first messages follow). */
export function wildcardStream<C extends WildcardChannel>(
  channel: C,
  host: StreamHost,
  market: string,
): WildcardStreams[C] {
  // Each branch makes WildcardStreams[C] of its C, which TypeScript does not narrow to.
  const stream = isDefinedChannel(channel)
    ? new DefinedSubscription(host, market, channel)
    : new plainStreamKinds[channel as keyof PlainWildcardStreams](host, market);
  return stream as WildcardStreams[C];
}

export interface WildcardEvents<S> {
  /** The relay joined a market that is active: its stream, whose snapshot follows. */
  added: { market: string; stream: S };
  /** The market is no longer active (or no longer the wildcard's): its stream has ended. */
  removed: { market: string; stream: S; reason: string };
  /** A market the relay could not join yet (`limit_exceeded`, `rate_limited`), or the `"*"` refused. */
  error: RelayClientError;
}

/** What a wildcard needs from the client that owns it. */
export interface WildcardHost<S> {
  /**
   * A new stream of this channel for `market`, held by the client from now on; undefined when the
   * client already holds that market by name (it stays the application's own).
   */
  adopt(market: string): S | undefined;
  /** The stream is no longer held through the wildcard. */
  drop(stream: S): void;
  /** The application unsubscribed `"*"`: stop it at the relay and forget it. */
  release(): void;
  reportListenerError(error: unknown): void;
}

/** Why a stream ends when its market left the wildcard. */
const NO_LONGER_ACTIVE = 'market no longer active';

export class WildcardSubscription<S extends WildcardStreams[WildcardChannel]> extends Emitter<
  WildcardEvents<S>
> {
  readonly channel: WildcardChannel;
  readonly #host: WildcardHost<S>;
  readonly #streams = new Map<string, S>();
  /** A `"*"` subscribe went out: the relay's next announcement is the whole of what it stands for. */
  #expectingAll = true;
  #closed = false;

  constructor(channel: WildcardChannel, host: WildcardHost<S>) {
    super();
    this.channel = channel;
    this.#host = host;
  }

  /** Each market the wildcard holds now, with its stream. */
  get streams(): ReadonlyMap<string, S> {
    return this.#streams;
  }

  get isClosed(): boolean {
    return this.#closed;
  }

  /** Stops following the catalogue; every stream of the wildcard ends with status `closed`. */
  unsubscribe(): void {
    if (this.#closed) return;
    this.#host.release();
    this.end('unsubscribed');
  }

  protected override onListenerError(error: unknown): void {
    this.#host.reportListenerError(error);
  }

  // --- Called by the client ----------------------------------------------------------------------

  /** Whether `stream` is held through this wildcard (the client does not subscribe it by name). */
  owns(stream: unknown): boolean {
    return [...this.#streams.values()].includes(stream as S);
  }

  /** The `"*"` subscribe; after a reconnect it names where each stream may resume. */
  request(): SubscribeBody {
    this.#expectingAll = true;
    const points: Record<string, ResumePoint> = {};
    for (const [market, stream] of this.#streams) {
      const point = stream.resumePoint;
      if (point !== undefined) points[market] = point;
    }
    return {
      op: 'subscribe',
      channel: this.channel,
      markets: [WILDCARD],
      ...(Object.keys(points).length === 0 ? {} : { resume: points }),
    };
  }

  /** A `subscribed` announcement: the markets joined (after a subscribe, every market it stands for). */
  joined(markets: readonly string[]): void {
    if (this.#closed) return;
    if (this.#expectingAll) {
      this.#expectingAll = false;
      const listed = new Set(markets);
      for (const market of [...this.#streams.keys()])
        if (!listed.has(market)) this.#remove(market, NO_LONGER_ACTIVE);
    }
    for (const market of markets) {
      // A stream that ended (upstream did not know the market yet) is replaced by a new one.
      if (this.#streams.get(market)?.isClosed === false) continue;
      this.#streams.delete(market);
      const stream = this.#host.adopt(market);
      if (stream === undefined) continue;
      this.#streams.set(market, stream);
      this.emit('added', { market, stream });
    }
  }

  /** An `unsubscribed` announcement: these markets are no longer active. */
  left(markets: readonly string[]): void {
    for (const market of markets) this.#remove(market, NO_LONGER_ACTIVE);
  }

  /** The application unsubscribed one of the streams by itself. */
  forget(stream: unknown): void {
    for (const [market, held] of this.#streams) if (held === stream) this.#streams.delete(market);
  }

  refused(error: RelayClientError): void {
    if (!this.#closed) this.emit('error', error);
  }

  end(reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const stream of this.#streams.values()) {
      this.#host.drop(stream);
      stream.end(reason);
    }
    this.#streams.clear();
  }

  #remove(market: string, reason: string): void {
    const stream = this.#streams.get(market);
    if (stream === undefined) return;
    this.#streams.delete(market);
    this.#host.drop(stream);
    stream.end(reason);
    this.emit('removed', { market, stream, reason });
  }
}

/** What the client's wildcards need from it. */
export interface WildcardsHost {
  /** A stream of `channel` for `market`, held but not subscribed by name; undefined when named. */
  adopt<C extends WildcardChannel>(channel: C, market: string): WildcardStreams[C] | undefined;
  drop(stream: WildcardStreams[WildcardChannel]): void;
  send(request: SubscribeBody | UnsubscribeBody): void;
  isOpen(): boolean;
  reportListenerError(error: unknown): void;
}

/** The client's wildcard subscriptions, one per channel. */
export class ClientWildcards {
  readonly #host: WildcardsHost;
  readonly #byChannel = new Map<WildcardChannel, WildcardSubscription<WildcardStreams[WildcardChannel]>>();
  readonly #retries = new Set<ReturnType<typeof setTimeout>>();

  constructor(host: WildcardsHost) {
    this.#host = host;
  }

  /** The channel's wildcard: the one held, or a new one subscribed now (or on open). */
  subscribe<C extends WildcardChannel>(channel: C): WildcardSubscription<WildcardStreams[C]> {
    const held = this.#byChannel.get(channel);
    if (held !== undefined) return held as WildcardSubscription<WildcardStreams[C]>;
    const host = this.#host;
    const wildcard = new WildcardSubscription<WildcardStreams[C]>(channel, {
      adopt: (market) => host.adopt(channel, market),
      drop: (stream) => host.drop(stream),
      release: () => {
        this.#byChannel.delete(channel);
        host.send({ op: 'unsubscribe', channel, markets: [WILDCARD] });
      },
      reportListenerError: (error) => host.reportListenerError(error),
    });
    this.#byChannel.set(channel, wildcard as WildcardSubscription<WildcardStreams[WildcardChannel]>);
    if (host.isOpen()) host.send(wildcard.request());
    return wildcard;
  }

  get(channel: string): WildcardSubscription<WildcardStreams[WildcardChannel]> | undefined {
    return this.#byChannel.get(channel as WildcardChannel);
  }

  /** Whether a wildcard holds `stream` (so it is not subscribed by name on a reconnect). */
  owns(stream: unknown): boolean {
    return [...this.#byChannel.values()].some((wildcard) => wildcard.owns(stream));
  }

  /** Every wildcard's `"*"` subscribe, for a connection just opened. */
  requests(): SubscribeBody[] {
    return [...this.#byChannel.values()].map((wildcard) => wildcard.request());
  }

  /** A `subscribed` or `unsubscribed` without `id` and with `wildcard: true`. */
  announced(message: SubscribedMessage | UnsubscribedMessage): void {
    if (message.wildcard !== true || message.id !== undefined) return;
    const wildcard = this.get(message.channel);
    if (message.type === 'subscribed') wildcard?.joined(message.markets);
    else wildcard?.left(message.markets);
  }

  /** The application unsubscribed one stream by itself. */
  forget(stream: unknown): void {
    for (const wildcard of this.#byChannel.values()) wildcard.forget(stream);
  }

  /**
   * An error answering the `"*"` subscribe of `channel`: the wildcard is told; one that may pass on
   * retry sends the subscribe again after `retryMs`, any other ends the wildcard.
   */
  refused(channel: string, error: RelayClientError, retryMs: number | undefined): void {
    const wildcard = this.get(channel);
    if (wildcard === undefined) return;
    wildcard.refused(error);
    if (retryMs === undefined) {
      this.#byChannel.delete(wildcard.channel);
      wildcard.end(`subscribe refused: ${error.code}`);
      return;
    }
    const timer = setTimeout(() => {
      this.#retries.delete(timer);
      if (!wildcard.isClosed && this.#host.isOpen()) this.#host.send(wildcard.request());
    }, retryMs);
    this.#retries.add(timer);
  }

  /** The client closed for good. */
  end(reason: string): void {
    for (const timer of this.#retries) clearTimeout(timer);
    this.#retries.clear();
    for (const wildcard of this.#byChannel.values()) wildcard.end(reason);
    this.#byChannel.clear();
  }
}
