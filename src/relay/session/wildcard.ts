/**
 * @module relay/session/wildcard
 * A session's `"*"` subscriptions (docs/protocol.md "Wildcard subscriptions"): on a wildcard channel
 * (channels/registry.ts `wildcardChannels`), every market upstream's catalogue lists as active, now
 * and later. The session's wildcards hold the `markets` channel's `active` stream themselves (one
 * for all of its wildcard channels; its subscriber is this object, not the client) and, on each
 * state of it, join the streams of markets that appeared and leave those of markets that left,
 * announcing both to the client (`subscribed` / `unsubscribed` with `wildcard: true` and no `id`).
 *
 * Each stream joined this way is an ordinary subscription of the session: it counts against the
 * streams a connection may hold and passes market admission (the catalogue having listed it, it
 * is not looked up), so its polls go through the scheduler and the budget like any other. A market
 * refused (no room, or admission said no) is told once as a stream error and tried again each
 * second while it stays active.
 *
 * A `market` stream ends by itself when its market leaves `ACTIVE` (the update with the new
 * `status`, then `closed`): that last update is the channel's point. When the catalogue shows the
 * change first, the wildcard waits for the stream to close before leaving it, so the client sees
 * the update whichever poll came first.
 */

import { streamKey } from '../../../packages/protocol/src/channels/stream-key.ts';
import type { WildcardChannel } from '../../../packages/protocol/src/protocol/channels.ts';
import type {
  MarketsData,
  ResumePoint,
  ServerMessage,
} from '../../../packages/protocol/src/protocol/messages.ts';
import type { Refusal } from '../admission/market.ts';
import { activeCatalogue, closesWhenInactive } from '../channels/relay-registry.ts';
import type { Frame } from '../streams/frame.ts';
import type { StreamRegistry } from '../streams/registry.ts';
import type { AnyStream, StreamSubscriber } from '../streams/stream.ts';
import { type JoinedStream, refusalError, sendFirstMessages } from './subscription.ts';
import { planWildcard } from './wildcard-plan.ts';

/** How often markets a wildcard could not join yet are tried again. */
const RETRY_MS = 1_000;
/**
 * How long a `market` stream the catalogue no longer lists as active is kept for its own poll to
 * show the new status and close it. The default `--max-age-ms`: every stream is confirmed within
 * it while the budget allows, so a stream still open then has a market upstream still calls
 * `ACTIVE` (a catalogue that merely stopped listing it), and it is left as any other channel's.
 */
const CLOSE_WAIT_MS = 30_000;

/** What the wildcards need of their session. */
export interface WildcardHost {
  readonly registry: StreamRegistry;
  readonly maxStreams: number;
  /** The session's streams, by stream key. */
  readonly held: ReadonlyMap<string, AnyStream>;
  /** The session as the joined streams' subscriber (it writes their messages). */
  readonly subscriber: StreamSubscriber;
  /** Markets admission refuses (known from the catalogue: never looked up). */
  admit(channel: WildcardChannel, markets: readonly string[]): ReadonlyMap<string, Refusal>;
  /** Joins the streams as the session's own; `subscribed` is written before their first messages. */
  join(
    channel: WildcardChannel,
    markets: readonly string[],
    resume: Readonly<Record<string, ResumePoint>> | undefined,
  ): { joined: JoinedStream[]; recovered: Record<string, boolean> };
  /** Leaves a stream the session holds. */
  leave(stream: AnyStream): void;
  /** `compact`: announcements name each stream's number. */
  readonly compact: boolean;
  send(message: ServerMessage): void;
}

interface ChannelWildcard {
  /** Markets this wildcard joined and still holds (their streams may have ended meanwhile). */
  owned: Set<string>;
  /**
   * Active markets this wildcard has dealt with: owned, waiting, held by the client by name, or
   * unsubscribed by name (not joined again until they leave the active list and come back).
   */
  covered: Set<string>;
  /** Active markets not joined yet, with the refusal the client was told. */
  waiting: Map<string, Refusal['code']>;
  /** Resume points of the subscribe, for the markets of its first expansion. */
  resume: Readonly<Record<string, ResumePoint>> | undefined;
  /** Whether the first expansion was announced (it is, even when empty). */
  announced: boolean;
  /**
   * Held `market` streams of markets the catalogue no longer lists as active, waiting for their
   * own poll to close them (the timer leaves them if it does not come).
   */
  closing: Map<string, ReturnType<typeof setTimeout>>;
}

export class SessionWildcards implements StreamSubscriber {
  /** Its catalogue stream's states are read here, not sent to the client. */
  readonly internal = true;
  readonly behalfOf: StreamSubscriber;
  readonly #host: WildcardHost;
  readonly #channels = new Map<WildcardChannel, ChannelWildcard>();
  #catalogue: AnyStream | undefined;
  /** Market ids the catalogue lists as active; undefined before its first state. */
  #active: readonly string[] | undefined;
  #retry: ReturnType<typeof setTimeout> | undefined;

  constructor(host: WildcardHost) {
    this.#host = host;
    this.behalfOf = host.subscriber;
  }

  /** The channels subscribed with `"*"`. */
  get channels(): WildcardChannel[] {
    return [...this.#channels.keys()];
  }

  has(channel: string): boolean {
    return this.#channels.has(channel as WildcardChannel);
  }

  /**
   * A `"*"` subscribe, answered already: joins what the catalogue lists as active (at once if it
   * has a state, else on its first). A repeated one resyncs: each stream it holds gets a snapshot.
   */
  subscribe(channel: WildcardChannel, resume: Readonly<Record<string, ResumePoint>> | undefined): void {
    const existing = this.#channels.get(channel);
    if (existing !== undefined) {
      this.#resync(channel, existing);
      return;
    }
    this.#channels.set(channel, {
      owned: new Set(),
      covered: new Set(),
      waiting: new Map(),
      resume,
      announced: false,
      closing: new Map(),
    });
    if (this.#catalogue === undefined) {
      const stream = this.#host.registry.subscribe(this, activeCatalogue);
      this.#catalogue = stream;
      if (stream.hasState) this.#active = activeMarkets(stream.state as MarketsData);
    }
    this.#reconcile();
  }

  /** An `unsubscribe` of `"*"`: every stream the wildcard joined is left. */
  unsubscribe(channel: WildcardChannel): void {
    const wildcard = this.#channels.get(channel);
    if (wildcard === undefined) return;
    stopWaiting(wildcard);
    for (const market of wildcard.owned) this.#leave(channel, market);
    this.#channels.delete(channel);
    if (this.#channels.size === 0) this.close();
  }

  /**
   * The client unsubscribed these markets by name: the wildcard does not join them again while
   * they stay active. (Subscribing one by name is a resync: the wildcard keeps it.)
   */
  release(channel: string, markets: readonly string[]): void {
    const wildcard = this.#channels.get(channel as WildcardChannel);
    if (wildcard === undefined) return;
    for (const market of markets) {
      clearTimeout(wildcard.closing.get(market));
      wildcard.closing.delete(market);
      wildcard.owned.delete(market);
      wildcard.waiting.delete(market);
      wildcard.covered.add(market);
    }
  }

  /**
   * A stream the session held has ended. One of a wildcard's that never had a state was refused by
   * upstream (`unknown_market`: upstream did not have the market yet, or no longer): while the
   * market stays active, it waits for another try, which market admission allows once the "not
   * found" is forgotten.
   */
  streamEnded(stream: AnyStream): void {
    const wildcard = this.#channels.get(stream.channel as WildcardChannel);
    if (stream.hasState) {
      if (wildcard?.closing.has(stream.market) === true)
        this.#leaveClosing(stream.channel as WildcardChannel, wildcard, stream.market);
      return;
    }
    if (wildcard?.owned.delete(stream.market) !== true) return;
    // The client was told by the stream's own error: the same code is not sent again.
    wildcard.waiting.set(stream.market, 'unknown_market');
    this.#scheduleRetry();
  }

  /** The session ends: the catalogue stream is left (the session leaves the streams it holds). */
  close(): void {
    if (this.#retry !== undefined) clearTimeout(this.#retry);
    this.#retry = undefined;
    for (const wildcard of this.#channels.values()) stopWaiting(wildcard);
    if (this.#catalogue !== undefined) this.#host.registry.unsubscribe(this, this.#catalogue);
    this.#catalogue = undefined;
    this.#active = undefined;
    this.#channels.clear();
  }

  // --- StreamSubscriber, for the catalogue stream ------------------------------------------------

  deliver(stream: AnyStream): void {
    if (stream !== this.#catalogue || !stream.hasState) return;
    const active = activeMarkets(stream.state as MarketsData);
    // The catalogue changes with every trade (probability, volume); the list of ids seldom does.
    if (active === this.#active) return;
    this.#active = active;
    this.#reconcile();
  }

  /** Staleness of the catalogue changes nothing: the wildcard keeps the markets it holds. */
  notify(_stream: AnyStream, _frame: Frame): void {}

  ended(stream: AnyStream): void {
    if (stream === this.#catalogue) this.#catalogue = undefined;
  }

  // --- Keeping the streams in line with the catalogue --------------------------------------------

  #reconcile(): void {
    if (this.#active === undefined) return;
    for (const [channel, wildcard] of this.#channels) this.#reconcileChannel(channel, wildcard, this.#active);
    this.#scheduleRetry();
  }

  #reconcileChannel(channel: WildcardChannel, wildcard: ChannelWildcard, active: readonly string[]): void {
    const plan = planWildcard(
      active,
      { owned: wildcard.owned, covered: wildcard.covered, waiting: new Set(wildcard.waiting.keys()) },
      (market) => !wildcard.owned.has(market) && this.#host.held.has(streamKey(channel, market)),
      // The streams it leaves make room for the ones it joins (a `market` stream left later, once closed).
      this.#host.maxStreams -
        this.#host.held.size +
        (closesWhenInactive(channel) ? 0 : this.#heldOf(channel, wildcard.owned, active)),
    );
    const listed = new Set(active);
    for (const [market, timer] of wildcard.closing)
      if (listed.has(market)) {
        clearTimeout(timer);
        wildcard.closing.delete(market);
      }
    const leaving = plan.leave.filter((market) => !wildcard.closing.has(market));
    const waitForClose = leaving.filter(
      (market) => closesWhenInactive(channel) && this.#host.held.has(streamKey(channel, market)),
    );
    for (const market of waitForClose) {
      const timer = setTimeout(() => this.#leaveClosing(channel, wildcard, market), CLOSE_WAIT_MS);
      timer.unref();
      wildcard.closing.set(market, timer);
    }
    const leaveNow = leaving.filter((market) => !wildcard.closing.has(market));
    for (const market of leaveNow) this.#leave(channel, market);
    if (leaveNow.length > 0)
      this.#host.send({ type: 'unsubscribed', channel, markets: leaveNow, wildcard: true });
    wildcard.covered = plan.covered;
    for (const market of [...wildcard.waiting.keys()])
      if (!plan.stillWaiting.has(market)) wildcard.waiting.delete(market);

    const refused = new Map(this.#host.admit(channel, plan.join));
    const overLimit: Refusal = {
      code: 'limit_exceeded',
      message: `at most ${this.#host.maxStreams} streams per connection`,
    };
    for (const market of plan.noRoom) refused.set(market, overLimit);
    this.#join(
      channel,
      wildcard,
      plan.join.filter((market) => !refused.has(market)),
    );
    for (const [market, refusal] of refused) {
      if (wildcard.waiting.get(market) !== refusal.code)
        this.#host.send(refusalError(channel, market, refusal));
      wildcard.waiting.set(market, refusal.code);
    }
  }

  /** How many of the streams `owned` holds are of markets no longer `active` (and so left now). */
  #heldOf(channel: WildcardChannel, owned: ReadonlySet<string>, active: readonly string[]): number {
    const listed = new Set(active);
    return [...owned].filter(
      (market) => !listed.has(market) && this.#host.held.has(streamKey(channel, market)),
    ).length;
  }

  /** Joins `markets` and announces them; the first expansion is announced even when empty. */
  #join(channel: WildcardChannel, wildcard: ChannelWildcard, markets: readonly string[]): void {
    if (markets.length === 0 && wildcard.announced) return;
    wildcard.announced = true;
    const { resume } = wildcard;
    wildcard.resume = undefined;
    const { joined, recovered } = this.#host.join(channel, markets, resume);
    for (const { market } of joined) {
      wildcard.owned.add(market);
      wildcard.waiting.delete(market);
    }
    const resumed = resume !== undefined && Object.keys(resume).length > 0;
    this.#announce(channel, joined, resumed ? recovered : undefined);
  }

  /**
   * A repeated `"*"` subscribe: every stream the wildcard holds is announced again, each with a
   * fresh snapshot (before its first expansion, that expansion is the answer).
   */
  #resync(channel: WildcardChannel, wildcard: ChannelWildcard): void {
    if (!wildcard.announced) return;
    const joined: JoinedStream[] = [];
    for (const market of wildcard.owned) {
      const stream = this.#host.held.get(streamKey(channel, market));
      if (stream !== undefined) joined.push({ market, stream, replay: undefined });
    }
    this.#announce(channel, joined, undefined);
  }

  #announce(
    channel: WildcardChannel,
    joined: readonly JoinedStream[],
    recovered: Record<string, boolean> | undefined,
  ): void {
    this.#host.send({
      type: 'subscribed',
      channel,
      markets: joined.map(({ market }) => market),
      wildcard: true,
      ...(recovered === undefined ? {} : { recovered }),
      ...(this.#host.compact
        ? { streams: Object.fromEntries(joined.map(({ market, stream }) => [market, stream.number])) }
        : {}),
    });
    sendFirstMessages(this.#host.subscriber, joined);
  }

  /** A `market` stream the catalogue let go of closed (or never did in time): left, and announced. */
  #leaveClosing(channel: WildcardChannel, wildcard: ChannelWildcard, market: string): void {
    clearTimeout(wildcard.closing.get(market));
    wildcard.closing.delete(market);
    this.#leave(channel, market);
    this.#host.send({ type: 'unsubscribed', channel, markets: [market], wildcard: true });
  }

  #leave(channel: WildcardChannel, market: string): void {
    this.#channels.get(channel)?.owned.delete(market);
    const stream = this.#host.held.get(streamKey(channel, market));
    if (stream !== undefined) this.#host.leave(stream);
  }

  #scheduleRetry(): void {
    const waiting = [...this.#channels.values()].some((wildcard) => wildcard.waiting.size > 0);
    if (!waiting || this.#retry !== undefined) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#reconcile();
    }, RETRY_MS);
    this.#retry.unref();
  }
}

function stopWaiting(wildcard: ChannelWildcard): void {
  for (const timer of wildcard.closing.values()) clearTimeout(timer);
  wildcard.closing.clear();
}

/** The last catalogue state read and its active ids, shared by every session following it. */
let lastRead: { state: MarketsData; active: readonly string[] } | undefined;

/**
 * The ids of the markets a catalogue state lists as active. The `active` list holds only those; a
 * record that says otherwise (its `status` a string other than `ACTIVE`) is left out all the same.
 * Read once per state for all sessions, and the same array as the previous state's while the ids
 * are the same, so a session sees at once that nothing it follows changed.
 */
export function activeMarkets(state: MarketsData): readonly string[] {
  if (lastRead?.state === state) return lastRead.active;
  const ids = Object.entries(state)
    .filter(([, record]) => typeof record.status !== 'string' || record.status === 'ACTIVE')
    .map(([market]) => market);
  const previous = lastRead?.active;
  const same =
    previous !== undefined && previous.length === ids.length && ids.every((id, i) => id === previous[i]);
  lastRead = { state, active: same ? previous : ids };
  return lastRead.active;
}
