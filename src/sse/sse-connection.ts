/**
 * @module sse/sse-connection
 * One SSE response (docs/protocol.md "Server-Sent Events"): a subscriber of the relay's streams
 * exactly as a WebSocket connection is, writing each stream message as the frame's shared
 * `data:` line after its own `id:` line, which carries every stream's position (sse/event-id.ts).
 * A slow reader is handled as on the WebSocket (relay/streams/slow-consumer.ts); one that does not read is
 * dropped.
 */
import type { ServerResponse } from 'node:http';
import type { ServerMessage } from '../protocol/messages.ts';
import type { RelayEvents } from '../relay/events.ts';
import { type Frame, toFrame } from '../relay/streams/frame.ts';
import type { StreamRegistry } from '../relay/streams/registry.ts';
import { SlowConsumerPolicy, type SlowReaderLimits } from '../relay/streams/slow-consumer.ts';
import type { AnyStream, StreamSubscriber } from '../relay/streams/stream.ts';
import { streamKey } from '../util/keys.ts';
import { encodeEventId, positionToken } from './event-id.ts';

export interface SseContext {
  registry: StreamRegistry;
  events: RelayEvents;
  limits: SlowReaderLimits;
}

export class SseConnection implements StreamSubscriber {
  readonly id: number;
  readonly openedAt = Date.now();
  readonly #response: ServerResponse;
  readonly #context: SseContext;
  readonly #heldBack: SlowConsumerPolicy;
  /** Stream key -> its index in the request's markets, which is its place in the event id. */
  readonly #indexOf = new Map<string, number>();
  readonly #subscriptions = new Map<string, AnyStream>();
  /** Each stream's position as last written, in event-id form. */
  readonly #tokens: string[];
  #corked = false;
  #heartbeats = 0;
  #closed = false;

  /** `streamKeys[i]` is the stream of the request's i-th market; `tokens` where each resumes from. */
  constructor(
    id: number,
    response: ServerResponse,
    context: SseContext,
    streamKeys: readonly string[],
    tokens: string[],
  ) {
    this.id = id;
    this.#response = response;
    this.#context = context;
    this.#tokens = tokens;
    for (const [index, key] of streamKeys.entries()) this.#indexOf.set(key, index);
    this.#heldBack = new SlowConsumerPolicy(context.limits, () => this.#dropSlowReader());
    response.on('drain', () => this.#onDrain());
  }

  static streamKeys(channel: string, markets: readonly string[], depth: number | null | undefined): string[] {
    return markets.map((market) => streamKey(channel, market, depth));
  }

  get bufferedBytes(): number {
    return this.#response.writableLength + (this.#response.socket?.writableLength ?? 0);
  }

  get isHoldingBack(): boolean {
    return this.#heldBack.active;
  }

  /** The stream now belongs to this response (after the registry's subscribe). */
  track(stream: AnyStream): void {
    this.#subscriptions.set(stream.key, stream);
  }

  // --- StreamSubscriber -------------------------------------------------------------------------

  deliver(stream: AnyStream, frame: Frame): void {
    if (this.#heldBack.mustHoldBack(this.bufferedBytes)) {
      this.#heldBack.holdBack(stream);
      return;
    }
    const index = this.#indexOf.get(stream.key);
    if (index !== undefined && frame.position !== undefined)
      this.#tokens[index] = positionToken(frame.position);
    this.#write(`id: ${encodeEventId(this.#tokens)}\n`, frame.sseData);
  }

  notify(_stream: AnyStream, frame: Frame): void {
    this.#write(frame.sseData);
  }

  ended(stream: AnyStream): void {
    this.#subscriptions.delete(stream.key);
    this.#heldBack.forget(stream);
  }

  // --- The response -----------------------------------------------------------------------------

  send(message: ServerMessage): void {
    this.#write(toFrame(message).sseData);
  }

  /** A comment line: invisible to EventSource, but it keeps proxies and the client's timer alive. */
  heartbeat(now: Date): void {
    this.#heartbeats += 1;
    this.#write(`: heartbeat ${this.#heartbeats} ${now.toISOString()}\n\n`);
  }

  onceClosed(listener: () => void): void {
    if (this.#response.closed) listener();
    else this.#response.once('close', listener);
  }

  /** Ends the response; a browser's EventSource reconnects on its own, with its Last-Event-ID. */
  close(reason: string): void {
    if (this.#closed) return;
    this.#write(`: ${reason}\n\n`);
    this.#closed = true;
    this.#response.end();
  }

  /** Drops every subscription (the response is gone). */
  dispose(): void {
    this.#closed = true;
    this.#heldBack.clear();
    for (const stream of this.#subscriptions.values()) this.#context.registry.unsubscribe(this, stream);
    this.#subscriptions.clear();
  }

  /** Writes within one tick leave in one syscall, as on the WebSocket (ws/client-connection.ts). */
  #write(...chunks: (string | Buffer)[]): void {
    if (this.#closed || this.#response.destroyed) return;
    if (this.#heldBack.overflows(this.bufferedBytes)) {
      this.#dropSlowReader();
      return;
    }
    if (!this.#corked) {
      this.#corked = true;
      this.#response.cork();
      process.nextTick(() => {
        this.#corked = false;
        this.#response.uncork();
      });
    }
    for (const chunk of chunks) this.#response.write(chunk);
  }

  #onDrain(): void {
    if (this.#closed) return;
    const streams = this.#heldBack.resendOwed(this.bufferedBytes, this.#subscriptions, (stream, frame) =>
      this.deliver(stream, frame),
    );
    if (streams !== undefined) this.#context.events.emit('connection:conflated', { id: this.id, streams });
  }

  #dropSlowReader(): void {
    if (this.#closed) return;
    this.#context.events.emit('connection:slow-consumer', { id: this.id, bufferedBytes: this.bufferedBytes });
    this.#closed = true;
    this.#response.destroy();
  }
}
