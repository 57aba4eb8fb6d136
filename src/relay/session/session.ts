/**
 * @module relay/session/session
 * One client's session, whatever transport carries it (WebSocket, SSE), written once: a transport
 * gives it a `SessionSink` and its parsed requests. It checks each against the limits and market
 * admission, fetches the broker's history for a resume its rings cannot serve, joins the streams,
 * answers (`subscribed`, refusals, then each stream's replay or snapshot) and, when the client is
 * gone, leaves every stream. It holds back a slow reader (./slow-consumer.ts). Requests are answered
 * in arrival order; `list` and `update` are planned in own-view.ts, `since` in session-since.ts.
 */
import { streamKey } from '../../../packages/protocol/src/channels/stream-key.ts';
import {
  isChannel,
  isWildcard,
  isWildcardChannel,
} from '../../../packages/protocol/src/protocol/channels.ts';
import type {
  ClientRequest,
  ErrorCode,
  RequestId,
  ResumePoint,
  ServerMessage,
  SubscribeRequest,
  UnsubscribeRequest,
  UpdateRequest,
} from '../../../packages/protocol/src/protocol/messages.ts';
import type { Refusal } from '../admission/market.ts';
import { hasDepths } from '../channels/relay-registry.ts';
import { type Frame, groupOf, toFrame } from '../streams/frame.ts';
import { type HistoryReplay, NOTHING_FETCHED } from '../streams/registry.ts';
import type { AnyStream, StreamSubscriber } from '../streams/stream.ts';
import { echoedSelection, optionFields, subscribedMessage, withId } from './echo.ts';
import {
  heldView,
  optionsOf,
  pace,
  pacesOf,
  planUpdate,
  streamNumbers,
  subscriptionsMessage,
} from './own-view.ts';
import { type SessionReplays, sessionReplays } from './replay/replays.ts';
import { RequestOrder } from './request-order.ts';
import { SentPositions } from './sent-positions.ts';
import type { SessionContext, SessionOptions, SessionSink } from './session-context.ts';
import { SessionSince } from './session-since.ts';
import { SlowConsumerPolicy } from './slow-consumer.ts';
import {
  fetchReplay,
  joinStreams,
  refusalError,
  type StreamSelection,
  sendFirstMessages,
} from './subscription.ts';
import { SessionWildcards } from './wildcard.ts';

export type { SessionSink } from './session-context.ts';

/**
 * A `subscribe` as the session takes it. `resumesAll`: the request resumes every stream it names
 * (an SSE reconnect), so `subscribed.recovered` names each one, false where no position was given.
 */
export interface SessionSubscribe extends SubscribeRequest {
  resumesAll?: boolean;
}

export class Session implements StreamSubscriber {
  readonly id: number;
  /** Its transport compresses each stream message: the stream deflates each frame once for all such. */
  readonly deflates: boolean;
  readonly #sink: SessionSink;
  readonly #context: SessionContext;
  readonly #compact: boolean;
  readonly #onClose: (() => void) | undefined;
  readonly #subscriptions = new Map<string, AnyStream>();
  readonly #lastSent = new SentPositions();
  readonly #heldBack: SlowConsumerPolicy<AnyStream>;
  readonly #order = new RequestOrder();
  readonly #wildcards: SessionWildcards;
  /** Subscriptions with `since` (session/session-since.ts). */
  readonly #since: SessionSince;
  readonly #replays: SessionReplays;
  #ended = false;
  /** What `list` reads of the streams held. */
  readonly #view: ReturnType<typeof heldView>;

  constructor(id: number, sink: SessionSink, context: SessionContext, options: SessionOptions = {}) {
    this.id = id;
    this.#sink = sink;
    this.#context = context;
    this.#compact = options.encoding === 'compact';
    this.deflates = options.deflate === true;
    this.#onClose = options.onClose;
    this.#heldBack = new SlowConsumerPolicy(context.limits, sink, () => this.slowConsumer());
    context.marketAdmission.open(this, options.apiKey, options.addressGroup);
    this.#wildcards = new SessionWildcards({
      registry: context.registry,
      maxStreams: context.limits.maxStreams,
      held: this.#subscriptions,
      subscriber: this,
      compact: this.#compact,
      admit: (channel, markets) => context.marketAdmission.admit(this, channel, markets, { listed: true }),
      join: (channel, markets, resume) =>
        this.#joinStreams({ channel, markets, depth: undefined }, resume, new Map(), NOTHING_FETCHED),
      leave: (stream) => this.#leave(stream),
      send: (message) => this.#send(message),
    });
    this.#replays = sessionReplays(context.replays, options.addressGroup, sink, this);
    this.#since = new SessionSince(context.sinceReads, {
      order: this.#order,
      finished: () => this.#sink.backlog === undefined || this.#ended,
      write: (stream, frame) => this.#write(stream, frame),
      send: (message) => this.#send(message),
      leave: (stream) => this.#leave(stream),
      first: (streams) => sendFirstMessages(this, streams),
    });
    this.#view = heldView(this.#subscriptions, this.#lastSent, this, this.#since);
  }

  /** Streams the session holds. */
  get streamCount(): number {
    return this.#subscriptions.size;
  }

  get isHoldingBack(): boolean {
    return this.#heldBack.active;
  }

  // --- StreamSubscriber -------------------------------------------------------------------------

  deliver(stream: AnyStream, frame: Frame): void {
    if (this.#since.underWay.size === 0 || !this.#since.hold(stream, frame)) this.#write(stream, frame);
  }

  /** Writes a stream message, held back for a slow reader; a `since` history's past its seam. */
  #write(stream: AnyStream, frame: Frame): void {
    const backlog = this.#sink.backlog;
    if (backlog === undefined) return;
    if (this.#heldBack.mustHoldBack(backlog)) {
      this.#heldBack.holdBack(stream);
      return;
    }
    // Only a paced group's conflated update depends on what this session was sent last.
    const sent = frame.basis === undefined ? frame : this.#lastSent.frameFor(stream, frame, frame.basis);
    if (sent === undefined) return;
    this.#sink.writeStream(stream, sent, this.#subscriptions.size === 1);
    if (sent.position !== undefined) this.#lastSent.set(stream.key, sent.position);
  }

  notify(_stream: AnyStream, frame: Frame): void {
    this.#sink.write(frame);
  }

  ended(stream: AnyStream): void {
    this.#since.drop(stream.key);
    this.#context.marketAdmission.left(this, stream);
    this.#subscriptions.delete(stream.key);
    this.#lastSent.delete(stream.key);
    this.#heldBack.forget(stream);
    this.#wildcards.streamEnded(stream);
  }

  // --- What the transport calls -----------------------------------------------------------------

  /** A parsed client request: answered in arrival order, a bug costing this request only. */
  handle(request: ClientRequest | SessionSubscribe): void {
    this.#order.run(() => this.#handleSafely(request));
  }

  /** Answers a request the transport refused (unparsable, over its rate) with an error. */
  error(id: RequestId | undefined, code: ErrorCode, message: string, channel?: string): void {
    this.#context.events.emit('request:error', { id: this.id, code });
    this.#send({
      type: 'error',
      ...withId(id),
      code,
      message,
      ...(channel === undefined ? {} : { channel }),
    });
  }

  /** The client's buffer drained: holding back ends, each held stream gets one fresh snapshot. */
  drained(): void {
    if (this.#replays.running.size > 0) this.#replays.drained();
    // Called while holding back or replaying (a transport may also call it at any other drain).
    const backlog = this.#sink.backlog;
    if (!this.#heldBack.active || backlog === undefined) return;
    const streams = this.#heldBack.resendOwed(backlog, this.#subscriptions, (stream, frame) =>
      this.deliver(stream, frame),
    );
    if (streams !== undefined) this.#context.events.emit('connection:conflated', { id: this.id, streams });
  }

  /** The client does not read fast enough (held back too long, buffer past its limit, missed pings). */
  slowConsumer(): void {
    const backlog = this.#sink.backlog;
    if (backlog === undefined) return;
    this.#context.events.emit('connection:slow-consumer', { id: this.id, bufferedBytes: backlog });
    this.#sink.closeSlowConsumer();
  }

  /** The client is gone: every stream is left and what admission counted released (once). */
  close(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#heldBack.clear();
    this.#since.clear();
    this.#replays.close();
    this.#wildcards.close();
    this.#context.marketAdmission.close(this);
    for (const stream of this.#subscriptions.values()) {
      this.#context.marketAdmission.left(this, stream);
      this.#context.registry.unsubscribe(this, stream);
    }
    this.#subscriptions.clear();
    this.#onClose?.();
  }

  // --- Requests ---------------------------------------------------------------------------------

  #handleSafely(request: ClientRequest | SessionSubscribe): void {
    if (this.#sink.backlog === undefined) return;
    try {
      this.#handle(request);
    } catch {
      // A bug must cost this one request, never the connection or the process; its words stay inside.
      this.error(request.id, 'internal', 'internal error');
    }
  }

  #handle(request: ClientRequest | SessionSubscribe): void {
    switch (request.op) {
      case 'ping':
        this.#send({ type: 'pong', ...withId(request.id), ts: new Date().toISOString() });
        return;
      case 'subscribe':
        this.#subscribe(request);
        return;
      case 'unsubscribe':
        this.#unsubscribe(request);
        return;
      case 'update':
        this.#update(request);
        return;
      case 'list':
        this.#send(
          subscriptionsMessage(request.id, this.#view, this.#wildcards.channels, {
            streams: { held: this.#subscriptions.size, allowed: this.#context.limits.maxStreams },
            ...(this.#sink.requestAllowance === undefined ? {} : { requests: this.#sink.requestAllowance }),
            channels: this.#context.marketAdmission.connectionUse(this),
          }),
        );
        return;
      default:
        this.#replays.handle(request);
    }
  }

  #subscribe(request: SessionSubscribe): void {
    if (isWildcard(request.markets)) {
      this.#subscribeWildcard(request);
      return;
    }
    const checked = this.#since.check(request, this.#context.limits.maxStreams, this.#subscriptions);
    if (!checked.ok) {
      this.error(request.id, checked.code, checked.message, request.channel);
      return;
    }
    const { selection, added } = checked;
    // Bounds on the costly kinds refuse the whole request, as the stream limit does.
    const over = this.#context.marketAdmission.exceeds(this, selection.channel, added);
    if (over !== undefined) {
      this.error(request.id, over.code, over.message, request.channel);
      return;
    }
    // Markets this session does not hold yet may be refused (unknown, or over its limits).
    const refused = this.#context.marketAdmission.admit(this, selection.channel, added);
    // A position beyond this relay's rings is resumed from the broker's history; later requests wait.
    this.#order.once(
      fetchReplay(this.#context.registry, selection, request.resume),
      (replay) => this.#join(request, selection, refused, replay),
      NOTHING_FETCHED,
    );
  }

  #join(
    request: SessionSubscribe,
    selection: StreamSelection,
    refused: ReadonlyMap<string, Refusal>,
    history: HistoryReplay,
  ): void {
    if (this.#sink.backlog === undefined || this.#ended) return;
    const { channel } = selection;
    const { resume } = request;
    const { joined, recovered } = this.#joinStreams(selection, resume, refused, history);
    // `subscribed` goes before anything of these streams (held while a `since` is read): joining
    // sends nothing, nor does a cluster replay, and a frame a transport holds for coalescing is of a
    // stream joined earlier. So on a compact connection a stream's number precedes its data.
    this.#since.answer(
      { id: request.id, text: request.since, since: selection.since, joined },
      subscribedMessage(request, selection, joined, this, recovered, this.#compact),
      // Stream errors naming the market, as a first poll's unknown_market would (protocol.md).
      [...refused].map(([market, refusal]) => refusalError(channel, market, refusal)),
    );
  }

  #joinStreams(
    selection: StreamSelection,
    resume: Readonly<Record<string, ResumePoint>> | undefined,
    refused: ReadonlyMap<string, Refusal>,
    history: HistoryReplay,
  ): ReturnType<typeof joinStreams> {
    const result = joinStreams(this.#context.registry, this, selection, resume, refused, history);
    for (const { market, stream, replay } of result.joined) {
      this.#subscriptions.set(stream.key, stream);
      this.#context.marketAdmission.joined(this, stream);
      this.#sink.joined?.(stream, replay === undefined ? undefined : resume?.[market]);
    }
    return result;
  }

  /**
   * `markets: ["*"]` (docs/protocol.md "Wildcard subscriptions"): answered at once with the
   * request's selection; the markets it stands for follow as `subscribed` announcements.
   */
  #subscribeWildcard(request: SessionSubscribe): void {
    const { channel } = request;
    // The request schema lets `*` through on these channels only.
    if (!isWildcardChannel(channel)) {
      this.error(request.id, 'bad_request', '"*" does not apply to this channel', channel);
      return;
    }
    this.#send({ type: 'subscribed', ...echoedSelection(request, channel, [...request.markets], undefined) });
    this.#wildcards.subscribe(channel, request.resume);
  }

  /**
   * The new depth's streams are joined before the old are left: the market never leaves the
   * connection, so market admission (counted per market, whatever the depth) has nothing to admit.
   */
  #update(request: UpdateRequest): void {
    const plan = planUpdate(request, this.#subscriptions);
    if (!plan.ok) {
      this.error(request.id, plan.code, plan.message, request.channel);
      return;
    }
    const { channel, markets, keys } = plan;
    const joined = plan.join.flatMap(
      ({ market, ...view }) =>
        this.#joinStreams({ channel, markets: [market], ...view }, undefined, new Map(), NOTHING_FETCHED)
          .joined,
    );
    const kept = pacesOf(plan.leave, this);
    for (const stream of plan.leave) this.#leave(stream);
    pace(plan, this.#view, this, kept);
    const streams = this.#compact ? { streams: streamNumbers(this.#subscriptions, markets, keys) } : {};
    const options = optionFields(optionsOf(this.#subscriptions, markets, keys, this));
    this.#send({ type: 'subscribed', ...withId(request.id), channel, markets, ...options, ...streams });
    sendFirstMessages(this, joined);
  }

  #leave(stream: AnyStream): void {
    this.#since.drop(stream.key);
    this.#context.marketAdmission.left(this, stream);
    this.#subscriptions.delete(stream.key);
    this.#lastSent.delete(stream.key);
    this.#heldBack.forget(stream);
    this.#context.registry.unsubscribe(this, stream);
  }

  #unsubscribe(request: UnsubscribeRequest): void {
    const { channel } = request;
    if (!isChannel(channel)) {
      this.error(request.id, 'unknown_channel', `unknown channel "${channel}"`, channel);
      return;
    }
    if (isWildcard(request.markets) && isWildcardChannel(channel)) {
      this.#wildcards.unsubscribe(channel);
      const echo = echoedSelection(request, channel, [...request.markets], undefined);
      this.#send({ type: 'unsubscribed', ...echo });
      return;
    }
    const depth = hasDepths(channel) ? (request.depth ?? null) : undefined;
    const group = hasDepths(channel) ? request.group : undefined;
    const markets = [...new Set(request.markets)];
    this.#wildcards.release(channel, markets);
    for (const market of markets) {
      const stream = this.#subscriptions.get(streamKey(channel, market, depth, group));
      if (stream !== undefined) this.#leave(stream);
    }
    const echo = echoedSelection(request, channel, markets, depth);
    this.#send({ type: 'unsubscribed', ...echo, ...groupOf({ group }) });
  }

  #send(message: ServerMessage): void {
    // Answers, statuses and errors are never held back: they leave now, behind what is written.
    this.#sink.write(toFrame(message));
  }
}
