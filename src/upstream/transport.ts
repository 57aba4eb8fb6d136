/**
 * @module upstream/transport
 * Every upstream call goes through here: policy wrapped around the bare exchange, the way undici's
 * interceptors wrap its dispatcher. Outermost first: the caller's signal and the client's shutdown,
 * the retry loop (a 429's `Retry-After`: rate-gate.ts), the caps (rate-gate.ts) per attempt, so
 * retries are budgeted too, then one HTTP exchange (exchange.ts) judged and validated (outcome.ts)
 * and reported as an event.
 */
import { EventEmitter, setMaxListeners } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import type { ErrorCode } from '../../packages/protocol/src/protocol/messages.ts';
import { fullJitterDelayMs } from '../../packages/protocol/src/util/backoff.ts';
import type { TraceSpan } from '../util/tracing.ts';
import { UpstreamDecodeError, UpstreamError, UpstreamTimeoutError } from './errors.ts';
import { type Exchange, HttpExchange, type HttpRequest } from './exchange.ts';
import {
  type Attempt,
  type BodyReading,
  judgeExchange,
  type Outcome,
  type UpstreamRequest,
} from './outcome.ts';
import { Admission, type AdmissionLoad, LocalRateGate, type RateGate, retryAfterMs } from './rate-gate.ts';

/**
 * One per attempt that reached an outcome; an attempt cut short by the caller's signal or by
 * `close()` is not an upstream outcome and reports nothing.
 */
export interface UpstreamRequestEvent {
  /** Route template, e.g. `GET /clob/orderbook`, `GET /api/markets/:id`. */
  endpoint: string;
  outcome: Outcome;
  status?: number;
  /** The protocol code of a failure (`unknown_market`: a 404 on an endpoint about one market). */
  code?: ErrorCode;
  /** Duration of this one attempt, from sending to the end of validation. */
  durationMs: number;
  /** 1-based. */
  attempt: number;
  /** A 429's `Retry-After`, in ms (capped); undefined when it gave none or another answer came. */
  retryAfterMs?: number;
  /** Bytes of the answer's body as they came over the wire (compressed, when it was); none without one. */
  bytes?: number;
}

export interface UpstreamTransportOptions {
  baseUrl: string;
  /** Per attempt, default 5000. */
  timeoutMs?: number;
  /** Extra attempts after the first, default 2. */
  retries?: number;
  /** Backoff base, default 100 ms (exponential, full jitter, capped at 2 s). */
  retryBaseMs?: number;
  /** Longest `Retry-After` honoured on a 429, default 30 s. */
  maxRetryAfterMs?: number;
  /** Requests in flight at most, default 16. */
  concurrency?: number;
  /** Requests started per second at most, default 50; ignored when `rateGate` is given. */
  rps?: number;
  /** Where each attempt waits for its rate token; default a LocalRateGate of `rps`. */
  rateGate?: RateGate;
  /** undici pool connections, default `concurrency`. */
  connections?: number;
}

export interface CallInit<T = unknown> extends BodyReading<T> {
  signal?: AbortSignal;
  /** The traced poll this call is part of: each attempt is a span in it, and carries its context upstream. */
  trace?: TraceSpan | undefined;
}

const RETRY_CAP_MS = 2000;

export class UpstreamTransport {
  readonly events = new EventEmitter<{ request: [UpstreamRequestEvent] }>();

  readonly #exchange: HttpExchange;
  readonly #admission: Admission;
  readonly #retries: number;
  readonly #retryBaseMs: number;
  readonly #maxRetryAfterMs: number;
  readonly #closing = new AbortController();
  #closed: Promise<void> | undefined;

  constructor(options: UpstreamTransportOptions) {
    const concurrency = options.concurrency ?? 16;
    this.#exchange = new HttpExchange({
      baseUrl: options.baseUrl,
      timeoutMs: options.timeoutMs ?? 5000,
      connections: options.connections ?? concurrency,
    });
    this.#admission = new Admission({
      concurrency,
      rate: options.rateGate ?? new LocalRateGate(options.rps ?? 50),
    });
    this.#retries = options.retries ?? 2;
    this.#retryBaseMs = options.retryBaseMs ?? 100;
    this.#maxRetryAfterMs = options.maxRetryAfterMs ?? 30_000;
    // Every call in flight listens on the shutdown signal (and removes its listener after), so more
    // than ten at once is normal, not the leak Node's default warning assumes.
    setMaxListeners(0, this.#closing.signal);
  }

  load(): AdmissionLoad {
    return this.#admission.load();
  }

  /** Aborts every waiting and running call (they reject with UpstreamError) and closes the pool. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      const reason = new UpstreamError('client', 'upstream client closed');
      this.#closing.abort(reason);
      await this.#exchange.close(reason);
    })();
    return this.#closed;
  }

  /**
   * Every public endpoint is a read, including the two batch POSTs (they query prices and change
   * nothing), so every call is idempotent and gets the same retry policy (see outcome.ts). A write
   * endpoint added later must not go through this loop unchanged.
   */
  async call<T>(
    request: UpstreamRequest<T>,
    init: CallInit<T> | undefined,
    retries = this.#retries,
  ): Promise<T> {
    // Without a caller's signal (every poll), the shutdown signal is the call's: nothing to link.
    const caller = init?.signal === undefined ? undefined : linkSignals([init.signal, this.#closing.signal]);
    const signal = caller?.signal ?? this.#closing.signal;
    try {
      for (let attempt = 1; ; attempt++) {
        const result = await this.#admission.run(
          () =>
            init?.trace === undefined
              ? this.#attempt(request, attempt, caller?.signal, init)
              : this.#tracedAttempt(request, attempt, caller?.signal, init, init.trace),
          signal,
        );
        if (result.ok) return result.value;
        if (!result.retryable || attempt > retries) throw result.error;
        const waitMs = result.retryAfterMs ?? fullJitterDelayMs(attempt - 1, this.#retryBaseMs, RETRY_CAP_MS);
        await delay(waitMs, undefined, { signal });
      }
    } catch (error) {
      // The caller's abort wins over whatever it interrupted; shutdown gives a typed error.
      if (init?.signal?.aborted) throw init.signal.reason;
      if (this.#closing.signal.aborted) {
        throw new UpstreamError(request.endpoint, 'upstream client closed', { cause: error });
      }
      throw error;
    } finally {
      caller?.dispose();
    }
  }

  /**
   * One request passed through as it is (the REST front, docs/operations.md): inside the same caps
   * as every other call, answered with upstream's own status and body, whatever they are; only a
   * timeout or network failure rejects. Not retried: the client that asked decides.
   */
  async forward(request: HttpRequest, init?: CallInit): Promise<{ status: number; text: string }> {
    const caller = init?.signal === undefined ? undefined : linkSignals([init.signal, this.#closing.signal]);
    try {
      const startedAt = performance.now();
      const exchange = await this.#admission.run(
        () => this.#exchange.send(request, caller?.signal),
        caller?.signal ?? this.#closing.signal,
      );
      const answered = exchange.kind === 'answered';
      const retryAfter =
        answered && exchange.status === 429
          ? retryAfterMs(exchange.retryAfter, Date.now(), this.#maxRetryAfterMs)
          : undefined;
      this.events.emit('request', {
        endpoint: request.endpoint,
        outcome: answered
          ? exchange.status < 400
            ? 'ok'
            : exchange.status === 429
              ? 'rate_limited'
              : 'http_error'
          : exchange.error instanceof UpstreamTimeoutError
            ? 'timeout'
            : 'network_error',
        ...(answered ? { status: exchange.status, bytes: exchange.wireBytes } : {}),
        durationMs: performance.now() - startedAt,
        attempt: 1,
        ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }),
      });
      if (!answered) throw exchange.error;
      if (exchange.undecodable !== undefined) {
        throw new UpstreamDecodeError(request.endpoint, exchange.undecodable);
      }
      return { status: exchange.status, text: exchange.body.toString('utf8') };
    } finally {
      caller?.dispose();
    }
  }

  /** One attempt; `signal` is the caller's (shutdown ends the exchange's attempts itself). */
  async #attempt<T>(
    request: UpstreamRequest<T>,
    attempt: number,
    signal: AbortSignal | undefined,
    reading: BodyReading<T> | undefined,
  ): Promise<Attempt<T>> {
    const startedAt = performance.now();
    const exchange = await this.#exchange.send(request, signal);
    const result = judgeExchange(request, exchange, this.#maxRetryAfterMs, Date.now(), reading);
    this.#reported(request, attempt, exchange, result, startedAt);
    return result;
  }

  /**
   * One attempt of a traced poll: the request (its decoding inside it) and the parse of its body
   * are spans of `trace`, and the request carries its span's context upstream (`traceparent`).
   */
  async #tracedAttempt<T>(
    request: UpstreamRequest<T>,
    attempt: number,
    signal: AbortSignal | undefined,
    reading: BodyReading<T>,
    trace: TraceSpan,
  ): Promise<Attempt<T>> {
    const startedAt = performance.now();
    const span = trace.child(
      request.endpoint,
      {
        'http.request.method': request.method,
        'url.path': request.path,
        'http.request.resend_count': attempt - 1,
      },
      'client',
    );
    let exchange: Exchange;
    try {
      exchange = await this.#exchange.send(request, signal, span);
    } catch (error) {
      span.fail(error);
      span.end();
      throw error;
    }
    if (exchange.kind === 'answered')
      span.set({
        'http.response.status_code': exchange.status,
        'http.response.body.size': exchange.wireBytes,
      });
    else span.fail(exchange.error);
    span.end();
    const parse = trace.child('parse');
    const result = judgeExchange(request, exchange, this.#maxRetryAfterMs, Date.now(), reading);
    parse.set({ 'market_relay.outcome': result.outcome });
    if (!result.ok) parse.fail(result.error);
    parse.end();
    this.#reported(request, attempt, exchange, result, startedAt);
    return result;
  }

  #reported<T>(
    request: UpstreamRequest<T>,
    attempt: number,
    exchange: Exchange,
    result: Attempt<T>,
    startedAt: number,
  ): void {
    this.events.emit('request', {
      endpoint: request.endpoint,
      outcome: result.outcome,
      status: result.status,
      ...(result.ok ? {} : { code: result.error.code }),
      durationMs: performance.now() - startedAt,
      attempt,
      ...(result.ok || result.retryAfterMs === undefined ? {} : { retryAfterMs: result.retryAfterMs }),
      ...(exchange.kind === 'answered' ? { bytes: exchange.wireBytes } : {}),
    });
  }
}

/**
 * One AbortSignal that fires when any of several others does (the caller's, the client's shutdown),
 * with its listeners removed afterwards. Written out instead of `AbortSignal.any` so that the
 * client's long-lived shutdown signal does not collect a listener per request.
 */
interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Detaches from the parents; call once the guarded work is over. */
  dispose(): void;
}

function linkSignals(parents: readonly (AbortSignal | undefined)[]): LinkedSignal {
  const controller = new AbortController();
  const detachers: (() => void)[] = [];
  for (const parent of parents) {
    if (parent === undefined) continue;
    if (parent.aborted) {
      controller.abort(parent.reason);
      break;
    }
    const onAbort = (): void => controller.abort(parent.reason);
    parent.addEventListener('abort', onAbort, { once: true });
    detachers.push(() => parent.removeEventListener('abort', onAbort));
  }
  return {
    signal: controller.signal,
    dispose() {
      for (const detach of detachers) detach();
    },
  };
}
