/**
 * @module client/connection/relay-connection
 * The SDK's side of the connection to a relay: open, watch for silence, and reopen after any loss with backoff and jitter
 * (./backoff.ts). Given several relays' URLs, each reopening tries the next one in turn, so a
 * relay that is gone is left for another of the cluster (docs/client.md "Several relays"). Knows
 * nothing of streams; the client above it resubscribes on each open.
 * A draining relay names the moment to leave (`going_away`, protocol.md "Going away"): the connection
 * then moves to the next relay at that moment, not at a random one of its own.
 * Silence is death: the relay sends a `heartbeat` every heartbeatMs (protocol.md "Transport"), so
 * a socket with no message for `deadAfterMs` is abandoned even if the OS has not noticed yet.
 */
import { closeCodes } from '../../../protocol/src/protocol/messages.ts';
import { RelayClientError } from '../events/client-error.ts';
import { type BackoffOptions, type RandomSource, reconnectDelay } from './backoff.ts';
import {
  CLOSED,
  type CloseEventLike,
  describeSocketError,
  type ErrorEventLike,
  type MessageEventLike,
  OPEN,
  refusedUpgradeStatus,
  type SocketFactory,
  type WebSocketLike,
} from './socket.ts';

export type ConnectionStatus = 'connecting' | 'open' | 'reconnecting' | 'closed';

export interface ConnectionOptions {
  /** Complete socket URLs, tried in turn from the first; at least one. */
  urls: readonly string[];
  createSocket: SocketFactory;
  backoff: BackoffOptions;
  random: RandomSource;
  deadAfterMs: number;
  /** Failed attempts, none ever open, after which an `unreachable` error says what may be wrong. */
  reportUnreachableAfter: number;
}

export interface ConnectionHandlers {
  status(status: ConnectionStatus): void;
  open(url: string): void;
  message(data: unknown): void;
  close(event: { code: number; reason: string; willReconnect: boolean }): void;
  reconnecting(event: { attempt: number; delayMs: number; url: string }): void;
  error(error: RelayClientError): void;
}

/** Close code the SDK uses when it abandons a silent socket (a private-use code, RFC 6455 7.4.2). */
export const SILENT_SOCKET_CLOSE = 4000;

const CLOSE_HANDSHAKE_MS = 2_000;

export class RelayConnection {
  readonly #options: ConnectionOptions;
  readonly #on: ConnectionHandlers;
  #socket: WebSocketLike | undefined;
  #status: ConnectionStatus = 'connecting';
  /** Index in `urls` of the relay connected to or being tried. */
  #relay = 0;
  /** Retries since the relay last proved it accepts us (a message arrived). */
  #attempt = 0;
  #refused = false;
  /** Whether any socket has opened since start; until one has, failed attempts are counted. */
  #everOpened = false;
  #failedAttempts = 0;
  #watchdog: ReturnType<typeof setTimeout> | undefined;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** When the draining relay asked us to reconnect (epoch ms), until the next attempt is scheduled. */
  #moveAt: number | undefined;
  #moveTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: ConnectionOptions, handlers: ConnectionHandlers) {
    if (options.urls.length === 0) throw new TypeError('at least one relay URL is needed');
    this.#options = options;
    this.#on = handlers;
  }

  get status(): ConnectionStatus {
    return this.#status;
  }

  /** The URL of the relay connected to, or being tried. */
  get url(): string {
    return this.#options.urls[this.#relay]!;
  }

  start(): void {
    this.#open();
  }

  /** Sends a text frame if the socket is open; returns whether it was sent. */
  send(text: string): boolean {
    if (this.#status !== 'open' || this.#socket?.readyState !== OPEN) return false;
    this.#socket.send(text);
    return true;
  }

  /**
   * The relay is draining (protocol.md "Going away"): in `reconnectInMs` this socket is left and the
   * next relay's opened at once. Should the relay's 1001 come first, the reconnect still waits for
   * that moment rather than a random part of `goingAwaySpreadMs`: the relay spread the moments.
   */
  goingAway(reconnectInMs: number): void {
    const socket = this.#socket;
    if (socket === undefined || this.#status !== 'open') return;
    this.#moveAt = Date.now() + reconnectInMs;
    clearTimeout(this.#moveTimer);
    this.#moveTimer = setTimeout(() => {
      this.#moveTimer = undefined;
      if (socket !== this.#socket || this.#status !== 'open') return;
      try {
        socket.close(1000, 'moving to another relay');
      } catch {
        // Some implementations throw on a socket already closing; it is left all the same.
      }
      this.#onLost(socket, closeCodes.goingAway, 'the relay is draining');
    }, reconnectInMs);
  }

  /** Closes for good (code 1000); resolves once the socket is gone. */
  close(): Promise<void> {
    if (this.#status === 'closed') return Promise.resolve();
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#watchdog);
    clearTimeout(this.#moveTimer);
    const socket = this.#socket;
    this.#setStatus('closed');
    this.#socket = undefined;
    if (socket === undefined || socket.readyState === CLOSED) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (code: number, reason: string) => {
        clearTimeout(giveUp);
        this.#detach(socket);
        this.#on.close({ code, reason, willReconnect: false });
        resolve();
      };
      // A relay that never answers the close handshake must not hold up the application.
      const giveUp = setTimeout(() => done(1006, 'close handshake timed out'), CLOSE_HANDSHAKE_MS);
      socket.onopen = null;
      socket.onmessage = null;
      socket.onerror = ignoreError;
      socket.onclose = (event: CloseEventLike) => done(event.code, event.reason);
      socket.close(1000, 'client closed');
    });
  }

  #open(): void {
    let socket: WebSocketLike;
    const url = this.url;
    try {
      socket = this.#options.createSocket(url);
    } catch (cause) {
      this.#on.error(new RelayClientError('connection_failed', `cannot open ${url}`, { cause }));
      this.#attemptFailed();
      this.#scheduleRetry(undefined);
      return;
    }
    this.#socket = socket;
    socket.onopen = () => {
      this.#everOpened = true;
      this.#armWatchdog(socket);
      this.#setStatus('open');
      this.#on.open(url);
    };
    socket.onmessage = (event: MessageEventLike) => {
      this.#attempt = 0;
      this.#armWatchdog(socket);
      this.#on.message(event.data);
    };
    socket.onerror = (event: ErrorEventLike) => {
      const description = describeSocketError(event);
      const status = refusedUpgradeStatus(description);
      if (status === 401 || status === 403) {
        this.#refused = true;
        this.#on.error(new RelayClientError('refused', `the relay refused the connection (HTTP ${status})`));
      } else {
        this.#on.error(new RelayClientError('connection_failed', description));
      }
    };
    socket.onclose = (event: CloseEventLike) => this.#onLost(socket, event.code, event.reason);
    // Also bounds the handshake: a relay that never answers counts as a silent socket.
    this.#armWatchdog(socket);
  }

  #onLost(socket: WebSocketLike, code: number, reason: string): void {
    if (socket !== this.#socket || this.#status === 'closed') return;
    this.#detach(socket);
    this.#socket = undefined;
    clearTimeout(this.#moveTimer);
    // protocol.md "Close codes": 1008 is an authentication refusal; retrying cannot fix it.
    if (this.#refused || code === closeCodes.policy) {
      if (code === closeCodes.policy) {
        this.#on.error(
          new RelayClientError('refused', `the relay closed the connection: ${reason || 'policy'}`),
        );
      }
      this.#setStatus('closed');
      this.#on.close({ code, reason, willReconnect: false });
      return;
    }
    const opened = this.#status === 'open';
    this.#on.close({ code, reason, willReconnect: true });
    if (!opened) this.#attemptFailed();
    this.#scheduleRetry(code);
  }

  /**
   * Counts an attempt that never opened while none ever has, and says once, at the threshold, what
   * may be wrong: in a browser a refused origin or key (HTTP 403/401) looks like a network failure,
   * so without this an application would wait for ever without a word.
   */
  #attemptFailed(): void {
    if (this.#everOpened) return;
    this.#failedAttempts += 1;
    if (this.#failedAttempts !== this.#options.reportUnreachableAfter) return;
    const relays = this.#options.urls.join(', ');
    this.#on.error(
      new RelayClientError(
        'unreachable',
        `no connection to ${relays} in ${this.#failedAttempts} attempts: the URL may be wrong or the relay down, ` +
          "or the relay refuses this client (a browser hides the HTTP answer: an origin not in the relay's " +
          '--allowed-origins, or a missing or wrong API key); still retrying',
      ),
    );
  }

  #scheduleRetry(code: number | undefined): void {
    const moveAt = this.#moveAt;
    this.#moveAt = undefined;
    const delayMs =
      moveAt === undefined
        ? reconnectDelay(this.#attempt, code, this.#options.backoff, this.#options.random)
        : Math.max(0, moveAt - Date.now());
    this.#attempt += 1;
    this.#relay = (this.#relay + 1) % this.#options.urls.length;
    this.#setStatus('reconnecting');
    this.#on.reconnecting({ attempt: this.#attempt, delayMs, url: this.url });
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      if (this.#status === 'reconnecting') this.#open();
    }, delayMs);
  }

  #armWatchdog(socket: WebSocketLike): void {
    clearTimeout(this.#watchdog);
    this.#watchdog = setTimeout(() => {
      const deadAfterMs = this.#options.deadAfterMs;
      try {
        socket.close(SILENT_SOCKET_CLOSE, 'no message from the relay');
      } catch {
        // Closing a socket that is still connecting throws in some implementations; it is abandoned anyway.
      }
      this.#onLost(socket, SILENT_SOCKET_CLOSE, `no message for ${deadAfterMs} ms`);
    }, this.#options.deadAfterMs);
  }

  #detach(socket: WebSocketLike): void {
    clearTimeout(this.#watchdog);
    socket.onopen = null;
    socket.onmessage = null;
    socket.onerror = ignoreError;
    socket.onclose = null;
  }

  #setStatus(status: ConnectionStatus): void {
    if (status === this.#status) return;
    this.#status = status;
    this.#on.status(status);
  }
}

/**
 * A socket the SDK has let go of may still report an error (`ws` reports the aborted handshake of a
 * socket closed while connecting); with no handler at all, `ws` would throw it as an uncaught error.
 */
function ignoreError(): void {}
