/**
 * @module relay/streams/publisher
 * Hands a polled state to a stream and tells the rest of the relay what happened: the update sent
 * (with its fan-out size and delay), and every freshness change (`live` / `stale` / `closed`). Every
 * message numbered and sent, whoever numbered it (this relay, or the cluster's lease holder), passes
 * here once, so here is where the history recorder is told of it.
 * Typed end to end: a stream only takes the state type its channel declares.
 *
 * What upstream confirmed unchanged goes out here too: every `confirmMs`, each stream whose state
 * upstream confirmed since its subscribers last heard of it sends them one `confirmed` message
 * (protocol.md "`confirmed`"), so a client tells a quiet stream (confirmed unchanged at T) from a
 * stalled one. The message is encoded once per stream for all its subscribers; a stream that sent
 * an update in the period says nothing more (the update's `rts` is its confirmation). The streams
 * confirmed in the period are kept as they pass here, so a round visits those and no other stream.
 */
import type { StreamState } from '../../../packages/protocol/src/protocol/messages.ts';
import type { TraceSpan } from '../../util/tracing.ts';
import { inTurns } from '../../util/turns.ts';
import type { RelayEvents } from '../events.ts';
import { depthOf, type Frame, groupOf } from './frame.ts';
import type { AnyStream, Stream } from './stream.ts';
import type { StreamChange } from './stream-identity.ts';

/**
 * Subscribers one turn of a round of `confirmed`, or of streams gone stale, tells before it lets the
 * event loop go on (util/turns.ts).
 */
export const NOTICES_PER_TURN = 500;

/** Takes each `snapshot` and `update` a stream sent, at once and without waiting (history/recorder.ts buffers it). */
export type RecordSink = (stream: AnyStream, frame: Frame, kind: 'snapshot' | 'update') => void;

export class StreamPublisher {
  readonly #events: RelayEvents;
  readonly #now: () => number;
  readonly #record: RecordSink | undefined;
  /** The streams confirmed unchanged since the last round of `confirmed`; undefined: no rounds. */
  #confirmedUnannounced: Set<AnyStream> | undefined;

  constructor(events: RelayEvents, now: () => number, record?: RecordSink) {
    this.#events = events;
    this.#now = now;
    this.#record = record;
  }

  /** Publishes `state`, diffed by the stream with its channel's codec (see `publishChange`). */
  publish<S, D>(
    stream: Stream<S, D>,
    state: S,
    ts: string,
    rts: string,
    receivedAt: number,
    trace?: TraceSpan,
  ): boolean {
    return this.publishChange(stream, stream.changeOf(state), ts, rts, receivedAt, trace);
  }

  /**
   * Publishes a state with the change its channel made of it; returns whether it changed the stream
   * (a first state counts as no change). In a traced poll (`trace`) the message and its hand-out
   * to the subscribers are one span, its fan-out another.
   */
  publishChange<S, D>(
    stream: Stream<S, D>,
    change: StreamChange<S, D>,
    ts: string,
    rts: string,
    receivedAt: number,
    trace?: TraceSpan,
  ): boolean {
    const hadState = stream.hasState;
    const span = trace?.child('publish', { 'market_relay.stream': stream.key });
    try {
      const { frame, kind, seq } = stream.publishChange(change, ts, rts, receivedAt);
      span?.set({ 'market_relay.message': frame === null ? 'none' : kind, 'market_relay.seq': seq });
      this.served(stream, frame, kind, receivedAt, span);
      return hadState && frame !== null;
    } catch (error) {
      span?.fail(error);
      throw error;
    } finally {
      span?.end();
    }
  }

  /**
   * A stream took a confirmed state (here, or numbered by the cluster's lease holder): it is live,
   * and `frame` (null: nothing changed) went to its subscribers. In a traced poll (`trace`) its
   * fan-out is a span: from the frame handed to the subscribers to the socket writes that carry it.
   */
  served(
    stream: AnyStream,
    frame: Frame | null,
    kind: 'snapshot' | 'update',
    receivedAt: number,
    trace?: TraceSpan,
  ): void {
    if (stream.freshness === 'stale' && stream.setFreshness('live')) this.emitState(stream, 'live');
    if (frame === null) this.#confirmedUnannounced?.add(stream);
    // One poll of the stream: a threshold's catch-up is counted in them (./paced.ts).
    stream.subscribers.polled();
    if (frame !== null) this.#record?.(stream, frame, kind);
    // Paced subscribers get this state later, as their group's snapshot (pacedSent).
    const recipients = frame === null ? 0 : stream.rawClientCount;
    if (frame !== null && recipients > 0) this.#sent(stream, frame, kind, recipients, receivedAt);
    if (frame !== null && trace !== undefined) {
      const bytes = frame.wire.length;
      trace
        .child('fan-out', {
          'market_relay.stream': stream.key,
          'market_relay.seq': stream.seq,
          'market_relay.subscribers': recipients,
          'market_relay.message_bytes': bytes,
          'market_relay.bytes': bytes * recipients,
        })
        .endAfterTurn();
    }
  }

  /** A paced group sent the stream's current state to `recipients` clients. */
  pacedSent(stream: AnyStream, frame: Frame, recipients: number): void {
    if (recipients > 0) this.#sent(stream, frame, 'snapshot', recipients, stream.lastSuccessAt);
  }

  #sent(
    stream: AnyStream,
    frame: Frame,
    kind: 'snapshot' | 'update',
    recipients: number,
    receivedAt: number,
  ) {
    this.#events.emit('stream:sent', {
      channel: stream.channel,
      kind,
      subscribers: recipients,
      bytes: frame.wire.length,
      sinceReceiptMs: this.#now() - receivedAt,
    });
  }

  /** Upstream confirmed the stream's state unchanged (the same response as the one it holds). */
  confirm(stream: AnyStream, rts: string, receivedAt: number): void {
    stream.confirm(rts, receivedAt);
    this.served(stream, null, 'update', receivedAt);
  }

  /**
   * Keeps (`true`) or stops keeping the streams confirmed unchanged, for the rounds of `confirmed`
   * (`ConfirmationAnnouncer`): kept only while someone announces them, so nothing piles up.
   */
  keepConfirmed(keep: boolean): void {
    this.#confirmedUnannounced = keep ? (this.#confirmedUnannounced ?? new Set()) : undefined;
  }

  /**
   * One round of `confirmed` over the streams confirmed since the last; resolves with how many
   * sent one. A turn of the event loop announces streams until about `NOTICES_PER_TURN`
   * subscribers were told, then lets the loop go on: a round over every stream a wildcard crowd
   * holds is thousands of messages, which at once held the loop for tens of milliseconds.
   */
  async announceConfirmations(): Promise<number> {
    const confirmed = this.#confirmedUnannounced;
    if (confirmed === undefined || confirmed.size === 0) return 0;
    this.#confirmedUnannounced = new Set();
    let sent = 0;
    await inTurns(confirmed, NOTICES_PER_TURN, (stream) => {
      if (!stream.announceConfirmation()) return 0;
      sent += 1;
      return stream.subscribers.size;
    });
    return sent;
  }

  /**
   * Marks each stream stale for its reason (a sweep found its target unconfirmed for too long),
   * about `NOTICES_PER_TURN` subscribers told a turn: when upstream fails, every stream goes stale in
   * the same sweep, and telling every subscriber at once held the loop for as long as a round of
   * `confirmed`. A stream served while the round waits (its `lastSuccessAt` moved) stays live: the
   * sweep judged a state that has been confirmed since.
   */
  async markStale(overdue: Iterable<readonly [AnyStream, string]>): Promise<void> {
    const judged = [...overdue].map(([stream, reason]) => ({ stream, reason, at: stream.lastSuccessAt }));
    await inTurns(judged, NOTICES_PER_TURN, ({ stream, reason, at }) => {
      if (stream.lastSuccessAt !== at || !stream.setFreshness('stale', reason)) return 0;
      this.emitState(stream, 'stale', reason);
      return stream.subscribers.size;
    });
  }

  emitState(stream: AnyStream, state: StreamState, reason?: string): void {
    this.#events.emit('stream:state', {
      channel: stream.channel,
      market: stream.market,
      ...depthOf(stream),
      ...groupOf(stream),
      state,
      ...(reason === undefined ? {} : { reason }),
    });
  }
}

/** Sends the `confirmed` messages of the streams upstream confirmed unchanged, every period. */
export class ConfirmationAnnouncer {
  readonly #publisher: StreamPublisher;
  readonly #periodMs: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(publisher: StreamPublisher, periodMs: number) {
    this.#publisher = publisher;
    this.#periodMs = periodMs;
  }

  start(): void {
    if (this.#timer !== undefined || this.#periodMs <= 0) return;
    this.#publisher.keepConfirmed(true);
    this.#timer = setInterval(() => void this.#publisher.announceConfirmations(), this.#periodMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#publisher.keepConfirmed(false);
  }
}
