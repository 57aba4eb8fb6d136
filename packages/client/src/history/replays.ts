/**
 * @module client/history/replays
 * The client's replays (docs/protocol.md "History and replay"): each `replay` request checked
 * before it is sent (a value the relay would refuse throws, as a bad id does), sent when the
 * connection is open, and every message carrying its id (a replayed message's `replay`, a
 * `replay_gap`, the closing `replayed`, a refusal's `id`) handed to it. A replay does not outlive
 * its connection: a close ends it with `connection_failed` (the application replays again from
 * where it got to).
 */
import { hasDepths } from '../../../protocol/src/channels/registry.ts';
import { canonicalStreamId } from '../../../protocol/src/protocol/channels.ts';
import type { ReplayRequest, ReplaySpeed } from '../../../protocol/src/protocol/history.ts';
import {
  type BookDepth,
  type Channel,
  MAX_MARKETS_PER_REQUEST,
  type RequestId,
  type ServerMessage,
} from '../../../protocol/src/protocol/messages.ts';
import { RelayClientError } from '../events/client-error.ts';
import { streamDepth, streamGroup } from '../subscriptions/channels/book/subscription.ts';
import { checkedTime } from '../subscriptions/options.ts';
import { Replay, type ReplayInput } from './replay.ts';

export interface ReplayOptions<C extends Channel = Channel> {
  channel: C;
  /** Stream ids as the channel's `subscribe` takes them; 1 to 100. */
  markets: readonly string[];
  /** ISO 8601 time (or Date), inclusive: the recorded messages whose `rts` is from here on. */
  from: string | Date;
  /** Exclusive; default: now. */
  to?: string | Date;
  /** 1 = the original pacing (the default), a multiplier of it, or `'max'`: as fast as the connection drains. */
  speed?: ReplaySpeed;
  /** `book`: which depth's record (default the full book, as `subscribeBook`). */
  depth?: BookDepth | 'full';
  /** `book`: which grouped stream's record. */
  group?: string;
}

export interface ReplaysWiring {
  send(text: string): boolean;
  isOpen(): boolean;
  reportListenerError(error: unknown): void;
}

export class Replays {
  readonly #o: ReplaysWiring;
  readonly #running = new Map<RequestId, Replay>();
  /** Requests made while the connection was not open, sent as it opens. */
  readonly #unsent = new Map<RequestId, ReplayRequest>();
  #next = 1;
  /** Set once the client closed: a replay asked after that ends at once. */
  #ended: RelayClientError | undefined;

  constructor(wiring: ReplaysWiring) {
    this.#o = wiring;
  }

  start<C extends Channel>(options: ReplayOptions<C>): Replay<C> {
    const request = replayRequest(options, `replay-${this.#next++}`);
    const { id } = request;
    const replay = new Replay<C>({
      id,
      channel: options.channel,
      depth: request.depth ?? null,
      group: request.group,
      stop: () => {
        if (this.#unsent.delete(id) || !this.#o.isOpen()) return;
        this.#o.send(JSON.stringify({ op: 'replay_stop', id }));
      },
      forget: () => {
        this.#running.delete(id);
        this.#unsent.delete(id);
      },
      reportListenerError: (error) => this.#o.reportListenerError(error),
    });
    if (this.#ended !== undefined) {
      replay.fail(this.#ended);
      return replay;
    }
    this.#running.set(id, replay as unknown as Replay);
    if (this.#o.isOpen()) this.#o.send(JSON.stringify(request));
    else this.#unsent.set(id, request);
    return replay;
  }

  /** Hands a message carrying a replay's id to that replay; false when it is no replay's. */
  route(message: ServerMessage): boolean {
    const id = replayIdOf(message);
    if (id === undefined) return false;
    const replay = this.#running.get(id);
    // A replay stopped or ended: what was still on its way is dropped.
    if (replay === undefined) return true;
    replay.receive(message as ReplayInput);
    // The relay's last word: the replay keeps what it holds for its reader, the client forgets it.
    if (message.type === 'replayed' || message.type === 'error') this.#running.delete(id);
    return true;
  }

  /** The connection opened: the replays asked before are sent. */
  opened(): void {
    for (const request of this.#unsent.values()) this.#o.send(JSON.stringify(request));
    this.#unsent.clear();
  }

  /** The connection closed: every replay sent on it ends with `error`. */
  closed(error: RelayClientError): void {
    for (const [id, replay] of this.#running) if (!this.#unsent.has(id)) replay.fail(error);
  }

  /** The client closed: every replay ends. */
  end(): void {
    const error = new RelayClientError('connection_failed', 'the client is closed');
    this.#ended = error;
    for (const replay of this.#running.values()) replay.fail(error);
    this.#unsent.clear();
  }
}

/** The id of the replay a message belongs to, if any. */
function replayIdOf(message: ServerMessage): RequestId | undefined {
  switch (message.type) {
    case 'snapshot':
    case 'update':
      return message.replay;
    case 'replay_gap':
    case 'replayed':
      return message.id;
    case 'error':
      // Only a replay's own ids are strings of this form; other requests are numbered.
      return typeof message.id === 'string' && message.id.startsWith('replay-') ? message.id : undefined;
    default:
      return undefined;
  }
}

/** The request of `options`, checked as the relay would check it; a bad value throws a TypeError. */
export function replayRequest(options: ReplayOptions, id: RequestId): ReplayRequest {
  const { channel, markets } = options;
  if (markets.length === 0 || markets.length > MAX_MARKETS_PER_REQUEST)
    throw new TypeError(`markets: expected 1 to ${MAX_MARKETS_PER_REQUEST} stream ids`);
  const ids = markets.map((market) => {
    const checked = canonicalStreamId(channel, market);
    if (!checked.ok) throw new TypeError(`${channel}: ${JSON.stringify(market)} is ${checked.message}`);
    return checked.id;
  });
  const from = checkedTime('from', options.from);
  const to = options.to === undefined ? undefined : checkedTime('to', options.to);
  if (to !== undefined && Date.parse(from) >= Date.parse(to))
    throw new TypeError(`from: ${from} is not before to: ${to}`);
  const speed = options.speed;
  if (speed !== undefined && speed !== 'max' && !(Number.isFinite(speed) && speed > 0))
    throw new TypeError(`speed: expected a number above 0 or "max", got ${JSON.stringify(speed)}`);
  const book = hasDepths(channel)
    ? { depth: streamDepth(options.depth), group: streamGroup(options.group) }
    : {};
  if (!hasDepths(channel) && (options.depth !== undefined || options.group !== undefined))
    throw new TypeError(`depth and group are a book's, not ${channel}'s`);
  return {
    op: 'replay',
    id,
    channel,
    markets: ids,
    from,
    ...(to === undefined ? {} : { to }),
    ...(speed === undefined ? {} : { speed }),
    ...(book.depth === undefined ? {} : { depth: book.depth }),
    ...(book.group === undefined ? {} : { group: book.group }),
  };
}
