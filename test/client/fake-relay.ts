/**
 * @module test/client/fake-relay
 * A scripted relay for the SDK's unit tests: a WebSocket server on port 0 that records every
 * request the SDK sends, answers each `subscribe`/`unsubscribe` as the relay does, and sends
 * whatever stream messages a test gives it (docs/protocol.md), to the newest connection. Like the
 * `ws` server it is built on, it selects the first subprotocol a client offers but speaks JSON (as a
 * relay before the compact encoding does), unless started to select none at all; with
 * `numberStreams` it numbers each stream in its `subscribed` acks as a compact relay does.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import type {
  HistoryCoverage,
  ReplayRequest,
  ReplayStopRequest,
} from '../../packages/protocol/src/protocol/history.ts';
import type {
  ServerMessage,
  SubscribeRequest,
  UnsubscribeRequest,
} from '../../packages/protocol/src/protocol/messages.ts';
import { waitFor } from '../support/wait-for.ts';

export type RecordedRequest = SubscribeRequest | UnsubscribeRequest;

/** The envelope fields a test does not care about. */
export const stamp = { ts: '2026-03-02T14:05:09.120Z', rts: '2026-03-02T14:05:09.171Z' };

export class FakeRelay {
  readonly requests: RecordedRequest[] = [];
  /** `replay` and `replay_stop` requests, unanswered: the test sends what a relay would. */
  readonly replayRequests: (ReplayRequest | ReplayStopRequest)[] = [];
  readonly sockets: WebSocket[] = [];
  /** The `history` of the `subscribed` answering a `since` (docs/protocol.md "History and replay"). */
  sinceCoverage: (since: string) => HistoryCoverage = (since) => ({ from: since, complete: true });
  /** Add `streams` (market -> number) to every `subscribed`, as a relay does on compact connections. */
  numberStreams = false;
  /** This connection's numbers; like another relay process, a new connection numbers anew. */
  readonly #numbers = new Map<string, number>();
  #lastNumber = 0;
  readonly #server: WebSocketServer;

  private constructor(server: WebSocketServer) {
    this.#server = server;
    server.on('connection', (socket) => {
      this.sockets.push(socket);
      this.#numbers.clear();
      socket.on('message', (data) => {
        const request = JSON.parse(data.toString()) as RecordedRequest | ReplayRequest | ReplayStopRequest;
        if (request.op === 'replay' || request.op === 'replay_stop') this.replayRequests.push(request);
        else this.#answer(socket, request);
      });
    });
  }

  /** `selectProtocol: false`: answer every handshake without a subprotocol, whatever was offered. */
  static async start(options: { selectProtocol?: boolean } = {}): Promise<FakeRelay> {
    const server = new WebSocketServer({
      port: 0,
      host: '127.0.0.1',
      ...(options.selectProtocol === false ? { handleProtocols: () => false as const } : {}),
    });
    await once(server, 'listening');
    return new FakeRelay(server);
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1/ws`;
  }

  /** Sends to the newest connection (the one the SDK uses). */
  send(message: ServerMessage | Record<string, unknown>): void {
    const socket = this.sockets.at(-1);
    if (socket === undefined || socket.readyState !== WebSocket.OPEN) throw new Error('no open connection');
    socket.send(JSON.stringify(message));
  }

  /** Sends a frame as given (a compact array, a broken frame). */
  sendText(text: string): void {
    const socket = this.sockets.at(-1);
    if (socket === undefined || socket.readyState !== WebSocket.OPEN) throw new Error('no open connection');
    socket.send(text);
  }

  /** The number `numberStreams` gave (or will give) the stream of (channel, market, depth). */
  streamNumber(channel: string, market: string, depth: number | null | undefined = undefined): number {
    const key = `${channel} ${market} ${String(channel === 'book' ? (depth ?? null) : undefined)}`;
    let number = this.#numbers.get(key);
    if (number === undefined) {
      number = ++this.#lastNumber;
      this.#numbers.set(key, number);
    }
    return number;
  }

  /** The `n`-th subscribe (0-based) of `channel`, once the SDK has sent it. */
  async subscribe(channel: string, n = 0): Promise<SubscribeRequest> {
    return waitFor(`subscribe #${n} of ${channel}`, () => {
      const matching = this.requests.filter(
        (request): request is SubscribeRequest => request.op === 'subscribe' && request.channel === channel,
      );
      return matching[n];
    });
  }

  /** Cuts every connection as a network failure would; the SDK reconnects. */
  dropConnections(): void {
    for (const socket of this.sockets) socket.terminate();
  }

  async close(): Promise<void> {
    this.dropConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #answer(socket: WebSocket, request: RecordedRequest): void {
    this.requests.push(request);
    const { id, channel, markets } = request;
    if (request.op === 'unsubscribe') {
      socket.send(JSON.stringify({ type: 'unsubscribed', id, channel, markets }));
      return;
    }
    // A resume this fake cannot honour (it keeps no history): the stream starts over with a snapshot.
    const recovered =
      request.resume === undefined
        ? {}
        : { recovered: Object.fromEntries(Object.keys(request.resume).map((market) => [market, false])) };
    const streams = this.numberStreams
      ? {
          streams: Object.fromEntries(
            markets.map((market) => [market, this.streamNumber(channel, market, request.depth)]),
          ),
        }
      : {};
    const depth = channel === 'book' ? { depth: request.depth ?? null } : {};
    const since =
      request.since === undefined ? {} : { since: request.since, history: this.sinceCoverage(request.since) };
    socket.send(
      JSON.stringify({
        type: 'subscribed',
        id,
        channel,
        markets,
        ...depth,
        ...recovered,
        ...streams,
        ...since,
      }),
    );
  }
}
