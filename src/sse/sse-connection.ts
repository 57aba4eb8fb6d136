/**
 * @module sse/sse-connection
 * One SSE response (docs/protocol.md "Server-Sent Events"), its I/O only: each stream message is
 * written as the frame's shared `data:` line after its own `id:` line, which carries every stream's
 * position (sse/event-id.ts); heartbeats are comment lines. What the request does (admission,
 * joining streams, resume, the first messages, holding back a slow reader) is its session's
 * (relay/session/session.ts); a reader too slow is dropped.
 */
import type { ServerResponse } from 'node:http';
import { streamKey } from '../../packages/protocol/src/channels/stream-key.ts';
import type { ResumePoint } from '../../packages/protocol/src/protocol/messages.ts';
import { Session, type SessionSink } from '../relay/session/session.ts';
import type { SessionContext, SessionOptions } from '../relay/session/session-context.ts';
import { type Frame, toFrame } from '../relay/streams/frame.ts';
import type { AnyStream } from '../relay/streams/stream.ts';
import { encodeEventId, positionToken } from './event-id.ts';

export class SseConnection implements SessionSink {
  readonly id: number;
  readonly openedAt = Date.now();
  readonly session: Session;
  readonly #response: ServerResponse;
  /** Buffered bytes past which the reader is dropped at once. */
  readonly #maxBufferBytes: number;
  /** Stream key -> its index in the request's markets, which is its place in the event id. */
  readonly #indexOf = new Map<string, number>();
  /** Each stream's position as last written, in event-id form ('' before its first message). */
  readonly #tokens: string[];
  #corked = false;
  #heartbeats = 0;
  #closed = false;

  /** `streamKeys[i]` is the stream of the request's i-th market. */
  constructor(
    id: number,
    response: ServerResponse,
    context: SessionContext,
    streamKeys: readonly string[],
    options: SessionOptions = {},
  ) {
    this.id = id;
    this.#response = response;
    this.#maxBufferBytes = context.limits.maxBufferBytes;
    this.#tokens = streamKeys.map(() => '');
    for (const [index, key] of streamKeys.entries()) this.#indexOf.set(key, index);
    this.session = new Session(id, this, context, options);
    response.on('drain', () => this.session.drained());
  }

  static streamKeys(
    channel: string,
    markets: readonly string[],
    depth: number | null | undefined,
    group?: string,
  ): string[] {
    return markets.map((market) => streamKey(channel, market, depth, group));
  }

  get bufferedBytes(): number {
    return this.#response.writableLength + (this.#response.socket?.writableLength ?? 0);
  }

  get isHoldingBack(): boolean {
    return this.session.isHoldingBack;
  }

  // --- SessionSink ------------------------------------------------------------------------------

  get backlog(): number | undefined {
    return this.#closed ? undefined : this.bufferedBytes;
  }

  /** A replayed stream carries on from where the client stood; the others start with a snapshot. */
  joined(stream: AnyStream, resumedFrom: ResumePoint | undefined): void {
    const index = this.#indexOf.get(stream.key);
    if (index !== undefined && resumedFrom !== undefined) this.#tokens[index] = positionToken(resumedFrom);
  }

  writeStream(stream: AnyStream, frame: Frame): void {
    const index = this.#indexOf.get(stream.key);
    if (index !== undefined && frame.position !== undefined)
      this.#tokens[index] = positionToken(frame.position);
    this.#write(`id: ${encodeEventId(this.#tokens)}\n`, frame.sseData);
  }

  write(frame: Frame): void {
    this.#write(frame.sseData);
  }

  closeSlowConsumer(): void {
    this.#closed = true;
    this.#response.destroy();
  }

  // --- The response -----------------------------------------------------------------------------

  /** A comment line: invisible to EventSource, but it keeps proxies and the client's timer alive. */
  heartbeat(now: Date): void {
    this.#heartbeats += 1;
    this.#write(`: heartbeat ${this.#heartbeats} ${now.toISOString()}\n\n`);
  }

  onceClosed(listener: () => void): void {
    if (this.#response.closed) listener();
    else this.#response.once('close', listener);
  }

  /** The relay is draining: the same `going_away` event as on a WebSocket; the response ends then. */
  goingAway(reconnectInMs: number): void {
    this.#write(toFrame({ type: 'going_away', reconnect_in_ms: reconnectInMs }).sseData);
  }

  /** Ends the response; a browser's EventSource reconnects on its own, with its Last-Event-ID. */
  close(reason: string): void {
    if (this.#closed) return;
    this.#write(`: ${reason}\n\n`);
    this.#closed = true;
    this.#response.end();
  }

  /** The response is gone: nothing more is written, and its session leaves everything. */
  dispose(): void {
    this.#closed = true;
    this.session.close();
  }

  /** Writes within one tick leave in one syscall, as on the WebSocket (ws/client-connection.ts). */
  #write(...chunks: (string | Buffer)[]): void {
    if (this.#closed || this.#response.destroyed) return;
    if (this.bufferedBytes > this.#maxBufferBytes) {
      this.session.slowConsumer();
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
}
