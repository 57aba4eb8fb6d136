/**
 * @module upstream/exchange
 * The bottom layer of the upstream transport, as undici's dispatcher is to its interceptors: one HTTP
 * request over a keep-alive pool with a per-attempt timeout, answered with the raw status and body or
 * with the timeout or network failure that ended it. No retries, caps or validation here; the
 * policies in transport.ts wrap this.
 *
 * Requests go through undici's dispatcher API, with a handler that collects the body's bytes: no
 * response stream, promise chain or AbortController per request: each would be allocated again
 * on every poll, the relay's hot path. Closing aborts whatever is still running.
 *
 * Every request asks for `gzip, br`; a body that comes with a `Content-Encoding` (asked for or not)
 * is decoded here, once whole, by Node's zlib: at once when it is small, on its thread pool when
 * not (content-encoding.ts; undici's decompress interceptor
 * is experimental and reports a corrupt body as a failed connection). One that cannot be decoded is
 * still an answer, flagged `undecodable`: upstream answered, with a body nobody can read.
 */
import type { Dispatcher } from 'undici';
import { Pool } from 'undici';
import type { TraceSpan } from '../util/tracing.ts';
import { decodeBody } from './content-encoding.ts';
import { UpstreamNetworkError, UpstreamTimeoutError } from './errors.ts';

export type QueryValue = string | number | boolean | undefined;

export interface HttpRequest {
  /** Route template, e.g. `GET /api/markets/:id`: names the request in errors and events. */
  endpoint: string;
  method: 'GET' | 'POST';
  /** Path below the base URL, with parameters already validated and encoded. */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
}

/**
 * What a market-relay's REST front puts in `Via` (RFC 9110 section 7.6.3) on everything it answers,
 * so a relay pointed at another relay, not at upstream, can tell (docs/operations.md "REST front").
 */
export const RELAY_VIA = '1.1 market-relay';

export type Exchange =
  | {
      kind: 'answered';
      status: number;
      retryAfter: string | undefined;
      /** The body's bytes, decoded from its `Content-Encoding` (as received when it has none). */
      body: Buffer;
      /** Bytes of the body as they came over the wire, before decoding. */
      wireBytes: number;
      /** Why a body with a `Content-Encoding` could not be decoded (`body` is then as received). */
      undecodable?: string;
      /** A 3xx's `Location`: a redirect is not followed, but says where upstream points. */
      location?: string;
      /** The answer came through another market-relay's REST front. */
      viaRelay?: boolean;
    }
  | { kind: 'failed'; error: UpstreamTimeoutError | UpstreamNetworkError };

export interface HttpExchangeOptions {
  baseUrl: string;
  timeoutMs: number;
  connections: number;
}

/** What the relay can decode; `deflate` and others arriving unasked are decoded too (content-encoding.ts). */
const ACCEPT_ENCODING = 'gzip, br';
const GET_HEADERS = { accept: 'application/json', 'accept-encoding': ACCEPT_ENCODING };
const POST_HEADERS = { ...GET_HEADERS, 'content-type': 'application/json' };

export class HttpExchange {
  readonly timeoutMs: number;
  readonly #pool: Pool;
  readonly #pathPrefix: string;
  /** Attempts under way, aborted by `close()`. */
  readonly #running = new Set<ExchangeAttempt>();
  #closed: Error | undefined;

  constructor(options: HttpExchangeOptions) {
    const base = new URL(options.baseUrl);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new TypeError(`upstream base URL must be http(s): ${options.baseUrl}`);
    }
    this.timeoutMs = options.timeoutMs;
    this.#pathPrefix = base.pathname.replace(/\/+$/, '');
    // Keep-alive is undici's default; one connection per concurrent request avoids pipelining
    // behind a slow response.
    this.#pool = new Pool(base.origin, {
      connections: options.connections,
      connect: { timeout: options.timeoutMs },
    });
  }

  /**
   * Sends one attempt. Rejects only when `signal` aborts or the exchange closes (the caller gave up
   * or the client is closing: not an upstream outcome); every upstream failure is an answer. A
   * traced attempt (`span`, the request's) carries its trace context upstream, and its body's
   * decoding is a span of its own.
   */
  send(request: HttpRequest, signal?: AbortSignal, span?: TraceSpan): Promise<Exchange> {
    if (this.#closed !== undefined) return Promise.reject(this.#closed);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<Exchange>((resolve, reject) => {
      const attempt = new ExchangeAttempt(request.endpoint, this.timeoutMs, signal, span, (outcome) => {
        this.#running.delete(attempt);
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      });
      this.#running.add(attempt);
      const hasBody = request.body !== undefined;
      const headers = hasBody ? POST_HEADERS : GET_HEADERS;
      this.#pool.dispatch(
        {
          method: request.method,
          path: this.#pathPrefix + request.path + queryString(request.query),
          headers: span === undefined ? headers : span.withContext(headers),
          body: hasBody ? JSON.stringify(request.body) : null,
        },
        attempt,
      );
    });
  }

  /** Aborts every attempt still running (they reject with `reason`), then closes the pool. */
  close(reason: Error = new Error('upstream exchange closed')): Promise<void> {
    this.#closed ??= reason;
    for (const attempt of [...this.#running]) attempt.abort(reason, true);
    return this.#pool.close();
  }
}

/**
 * One attempt as undici's dispatch handler: the status, the headers it needs and the body's chunks,
 * settled once by the response's end, its error, the timeout, the caller's abort or `close()`.
 */
class ExchangeAttempt implements Dispatcher.DispatchHandler {
  readonly #endpoint: string;
  readonly #timeoutMs: number;
  readonly #signal: AbortSignal | undefined;
  readonly #settle: (outcome: Exchange | Error) => void;
  readonly #timer: NodeJS.Timeout;
  readonly #onAbort: (() => void) | undefined;
  #controller: Dispatcher.DispatchController | undefined;
  /** Why the attempt was ended before undici started it; undici is told once it does. */
  #abortedWith: Error | undefined;
  #settled = false;
  #status = 0;
  #retryAfter: string | undefined;
  #viaRelay = false;
  #encoding: string | undefined;
  #location: string | undefined;
  #chunks: Buffer[] = [];
  /** The request's span, when it is traced. */
  readonly #span: TraceSpan | undefined;

  constructor(
    endpoint: string,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    span: TraceSpan | undefined,
    settle: (outcome: Exchange | Error) => void,
  ) {
    this.#endpoint = endpoint;
    this.#timeoutMs = timeoutMs;
    this.#signal = signal;
    this.#span = span;
    this.#settle = settle;
    this.#timer = setTimeout(
      () => this.abort(new UpstreamTimeoutError(endpoint, `no answer within ${timeoutMs} ms`), false),
      timeoutMs,
    );
    if (signal !== undefined) {
      this.#onAbort = () => this.abort(toError(signal.reason), true);
      signal.addEventListener('abort', this.#onAbort, { once: true });
    }
  }

  /** Ends the attempt: as an upstream timeout, or (`rejects`) as the caller's abort. */
  abort(reason: Error, rejects: boolean): void {
    if (this.#settled) return;
    if (this.#controller === undefined) this.#abortedWith = reason;
    else this.#controller.abort(reason);
    this.#finish(rejects ? reason : { kind: 'failed', error: this.#failure(reason) });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#abortedWith !== undefined) controller.abort(this.#abortedWith);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    this.#status = statusCode;
    const retryAfter = headers['retry-after'];
    this.#retryAfter = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
    const via = headers.via;
    this.#viaRelay = via !== undefined && [via].flat().join(', ').includes('market-relay');
    const encoding = headers['content-encoding'];
    this.#encoding = encoding === undefined ? undefined : [encoding].flat().join(', ');
    if (statusCode >= 300 && statusCode < 400) {
      const location = headers.location;
      this.#location = Array.isArray(location) ? location[0] : location;
    }
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    // The chunks are views into the socket's read buffers (each read its own, never reused). A body
    // that came in one read is used as it is: a copy would be one more off-heap allocation per
    // response, and those bring V8's major collections on sooner.
    const body = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks);
    this.#chunks = [];
    const answer = {
      kind: 'answered' as const,
      status: this.#status,
      retryAfter: this.#retryAfter,
      body,
      wireBytes: body.length,
      viaRelay: this.#viaRelay,
      ...(this.#location === undefined ? {} : { location: this.#location }),
    };
    if (this.#encoding === undefined) {
      this.#finish(answer);
      return;
    }
    // The timeout and the caller's abort still apply while the thread pool decodes a large body.
    const decoding = this.#span?.child('decode', {
      'http.response.header.content-encoding': [this.#encoding],
      'http.response.body.size': body.length,
    });
    decodeBody(body, this.#encoding, (decoded) => {
      decoding?.set({ 'market_relay.decoded_bytes': typeof decoded === 'string' ? 0 : decoded.length });
      decoding?.end();
      this.#finish(
        typeof decoded === 'string' ? { ...answer, undecodable: decoded } : { ...answer, body: decoded },
      );
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#finish({ kind: 'failed', error: this.#failure(error) });
  }

  #failure(cause: Error): UpstreamTimeoutError | UpstreamNetworkError {
    if (cause instanceof UpstreamTimeoutError) return cause;
    return isUndiciTimeout(cause)
      ? new UpstreamTimeoutError(this.#endpoint, `no answer within ${this.#timeoutMs} ms`, { cause })
      : new UpstreamNetworkError(this.#endpoint, describeNetworkError(cause), { cause });
  }

  #finish(outcome: Exchange | Error): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    if (this.#onAbort !== undefined) this.#signal?.removeEventListener('abort', this.#onAbort);
    this.#settle(outcome);
  }
}

function toError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}

function queryString(query: Record<string, QueryValue> | undefined): string {
  if (query === undefined) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.append(key, String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

const UNDICI_TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

function isUndiciTimeout(error: unknown): boolean {
  const code = errorCode(error);
  return code !== undefined && UNDICI_TIMEOUT_CODES.has(code);
}

function describeNetworkError(error: unknown): string {
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  return code === undefined || message.includes(code) ? message : `${code}: ${message}`;
}
