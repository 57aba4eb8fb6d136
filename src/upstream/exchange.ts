/**
 * @module upstream/exchange
 * The bottom layer of the upstream transport, as undici's dispatcher is to its interceptors: one HTTP
 * request over a keep-alive pool with a per-attempt timeout, answered with the raw status and body or
 * with the timeout or network failure that ended it. No retries, caps or validation here; the
 * policies in transport.ts wrap this.
 */
import { Pool } from 'undici';
import { linkSignals } from './abort.ts';
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

export type Exchange =
  | { kind: 'answered'; status: number; retryAfter: string | undefined; text: string }
  | { kind: 'failed'; error: UpstreamTimeoutError | UpstreamNetworkError };

export interface HttpExchangeOptions {
  baseUrl: string;
  timeoutMs: number;
  connections: number;
}

export class HttpExchange {
  readonly timeoutMs: number;
  readonly #pool: Pool;
  readonly #pathPrefix: string;

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
   * Sends one attempt. Rejects only when `callSignal` aborts (the caller gave up or the client is
   * closing: not an upstream outcome); every upstream failure is an answer.
   */
  async send(request: HttpRequest, callSignal: AbortSignal): Promise<Exchange> {
    const attemptSignal = linkSignals([callSignal], this.timeoutMs);
    try {
      const response = await this.#pool.request({
        method: request.method,
        path: this.#pathPrefix + request.path + queryString(request.query),
        headers:
          request.body === undefined
            ? { accept: 'application/json' }
            : { accept: 'application/json', 'content-type': 'application/json' },
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal: attemptSignal.signal,
      });
      const retryAfter = firstHeader(response.headers['retry-after']);
      // Always consumed, on errors too: undici keeps the connection busy until the body is read.
      const text = await response.body.text();
      return { kind: 'answered', status: response.statusCode, retryAfter, text };
    } catch (cause) {
      if (callSignal.aborted) throw cause;
      const error =
        attemptSignal.signal.aborted || isUndiciTimeout(cause)
          ? new UpstreamTimeoutError(request.endpoint, `no answer within ${this.timeoutMs} ms`, { cause })
          : new UpstreamNetworkError(request.endpoint, describeNetworkError(cause), { cause });
      return { kind: 'failed', error };
    } finally {
      attemptSignal.dispose();
    }
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
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

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
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
