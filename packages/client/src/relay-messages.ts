/**
 * @module client/relay-messages
 * Where each relay message goes (client/relay-client.ts holds the pieces): stream messages to
 * their stream, answers to the request in flight they answer, wildcard announcements to the
 * channel's wildcard (client/subscriptions/wildcard-subscription.ts), a replay's messages to it
 * (client/history/replays.ts), and errors to what they name; a subscribe refused as `rate_limited` is sent again a second later.
 */

import { isWildcard } from '../../protocol/src/protocol/channels.ts';
import type {
  Channel,
  ErrorCode,
  ErrorMessage,
  ServerMessage,
  SubscribedMessage,
} from '../../protocol/src/protocol/messages.ts';
import { decodeFrame } from './connection/frames.ts';
import type { StreamNumbers } from './connection/stream-numbers.ts';
import { RelayClientError } from './events/client-error.ts';
import type { RequestsInFlight } from './requests-in-flight.ts';
import type { AnyStreamSubscription } from './subscriptions/channel-subscriptions.ts';
import type { SubscribeBatch } from './subscriptions/subscribe-batch.ts';
import { depthOf, groupOf, type SubscriptionRegistry } from './subscriptions/subscriptions.ts';
import type { ClientWildcards } from './subscriptions/wildcard-subscription.ts';

/** Pause before re-sending a subscribe the relay refused as `rate_limited`. */
const RATE_LIMIT_RETRY_MS = 1_000;
/** Request errors that may pass on retry; any other answer to a subscribe refuses its streams. */
const RETRYABLE = new Set<ErrorCode>(['rate_limited', 'internal', 'upstream_unavailable']);

/** The client's parts a message may reach. */
export interface MessageTargets {
  streams: SubscriptionRegistry;
  inFlight: RequestsInFlight;
  numbers: StreamNumbers;
  wildcards: ClientWildcards;
  toSubscribe: SubscribeBatch;
  /** The replays running on the connection: messages carrying a replay's id go there. */
  replays: { route(message: ServerMessage): boolean };
  /** The client's `error` event. */
  error(error: RelayClientError): void;
  /** The relay is draining: reconnect (to the next relay) in `reconnectInMs`. */
  goingAway(reconnectInMs: number): void;
}

export class RelayMessages {
  readonly #o: MessageTargets;
  readonly #retryTimers = new Set<ReturnType<typeof setTimeout>>();

  constructor(targets: MessageTargets) {
    this.#o = targets;
  }

  /** The client closed: no subscribe is sent again. */
  stopRetries(): void {
    for (const timer of this.#retryTimers) clearTimeout(timer);
    this.#retryTimers.clear();
  }

  receive(data: unknown): void {
    const decoded = decodeFrame(data, this.#o.numbers);
    if (!decoded.ok) {
      const code = decoded.unknownStream === true ? 'unknown_stream' : 'malformed_frame';
      this.#o.error(new RelayClientError(code, decoded.reason));
      if (decoded.stream !== undefined) {
        const { channel, market, depth, group } = decoded.stream;
        this.#o.streams.get(channel, market, depth, group)?.malformed(decoded.reason);
      }
      return;
    }
    if (decoded.message !== undefined) this.#dispatch(decoded.message);
  }

  #dispatch(message: ServerMessage): void {
    if (this.#o.replays.route(message)) return;
    switch (message.type) {
      case 'snapshot':
      case 'update': {
        // A message for a stream the application no longer holds (just unsubscribed) is ignored.
        this.#o.streams
          .get(message.channel, message.market, depthOf(message), groupOf(message))
          ?.receive(message);
        return;
      }
      case 'status': {
        const stream = this.#o.streams.get(
          message.channel,
          message.market,
          depthOf(message),
          groupOf(message),
        );
        stream?.receiveStatus(message);
        if (stream?.isClosed) this.#o.streams.delete(stream);
        return;
      }
      case 'confirmed':
        this.#o.streams
          .get(message.channel, message.market, depthOf(message), groupOf(message))
          ?.receiveConfirmed(message);
        return;
      case 'subscribed':
        if (message.id !== undefined) this.#o.inFlight.answered(message.id);
        this.#o.numbers.learn(message);
        this.#o.wildcards.announced(message);
        this.#onSubscribed(message);
        this.#o.inFlight.reply(message);
        return;
      case 'unsubscribed':
        if (message.id !== undefined) this.#o.inFlight.answered(message.id);
        this.#o.wildcards.announced(message);
        return;
      case 'error':
        this.#onError(message);
        return;
      case 'subscriptions':
        this.#o.inFlight.answered(message.id);
        this.#o.inFlight.reply(message);
        return;
      case 'going_away':
        this.#o.goingAway(message.reconnect_in_ms);
        return;
      case 'pong':
      case 'heartbeat':
        return;
    }
  }

  #onSubscribed(message: SubscribedMessage): void {
    // The answer to a `since`: where it starts, told to each stream it names before its snapshot.
    if (message.history !== undefined) {
      for (const market of message.markets) {
        const stream = this.#o.streams.get(message.channel, market, depthOf(message), groupOf(message));
        if (stream !== undefined) stream.history = { ...message.history };
      }
    }
    if (message.recovered === undefined) return;
    for (const [market, recovered] of Object.entries(message.recovered)) {
      this.#o.streams.get(message.channel, market, depthOf(message), groupOf(message))?.resumed(recovered);
    }
  }

  /**
   * A stream error (it names a market) goes to that market's streams; a request error is the
   * answer to the request of its id, or without one to the oldest request in flight (the relay answers in order).
   */
  #onError(message: ErrorMessage): void {
    const error = new RelayClientError(message.code, message.message, {
      ...(message.channel === undefined ? {} : { channel: message.channel }),
      ...(message.market === undefined ? {} : { market: message.market }),
      ...(message.id === undefined ? {} : { requestId: message.id }),
    });
    const targets: AnyStreamSubscription[] = [];
    this.#o.inFlight.reply(message);
    // A `since` history that failed after `subscribed` names its request's id and the market: the
    // relay left that stream (docs/protocol.md "History since a time").
    const afterSubscribed = message.market !== undefined && message.id !== undefined;
    if (message.market !== undefined && (message.id === undefined || afterSubscribed)) {
      targets.push(...this.#o.streams.ofMarket(message.channel ?? '', message.market));
      // A market a wildcard could not join (it tries again while the market stays active).
      if (targets.length === 0) this.#o.wildcards.get(message.channel ?? '')?.refused(error);
    } else {
      const request = this.#o.inFlight.answered(message.id);
      if (request?.op === 'subscribe' && isWildcard(request.markets)) {
        const retry = RETRYABLE.has(message.code) ? RATE_LIMIT_RETRY_MS : undefined;
        this.#o.wildcards.refused(request.channel, error, retry);
      } else if (request !== undefined && request.op === 'subscribe') {
        for (const market of request.markets) {
          const stream = this.#o.streams.get(
            request.channel as Channel,
            market,
            request.depth ?? null,
            request.group,
          );
          if (stream !== undefined) targets.push(stream);
        }
        if (message.code === 'rate_limited') this.#retryLater(targets);
      }
    }
    this.#o.error(error);
    const refused = message.id !== undefined && (afterSubscribed || !RETRYABLE.has(message.code));
    for (const stream of targets) {
      stream.receiveError(error);
      // The relay did not subscribe it (bad market id, unknown channel, too many streams): asking
      // again on every reconnect would fail the same way.
      if (refused) stream.end(`subscribe refused: ${message.code}`);
      if (stream.isClosed) this.#o.streams.delete(stream);
    }
  }

  #retryLater(streams: AnyStreamSubscription[]): void {
    const timer = setTimeout(() => {
      this.#retryTimers.delete(timer);
      for (const stream of streams) if (!stream.isClosed) this.#o.toSubscribe.add(stream);
    }, RATE_LIMIT_RETRY_MS);
    this.#retryTimers.add(timer);
  }
}
