/**
 * @module relay/poll/upstream-health
 * What the relay knows of upstream's reachability: the time of the last successful request, the
 * error rate over recent attempts, the last error. Fed by every request the client makes; while
 * polling is idle (nobody subscribed) a light probe of upstream `GET /health` keeps it honest.
 *
 * And whether upstream is upstream at all: at start and on every probe, `GET /health` must answer
 * with upstream's health shape. A body that is not JSON or not that shape, a redirect (never
 * followed) or a 4xx there (a wrong base path or scheme, another service at that address, an HTML
 * page) makes the identity `mismatch`: "upstream misconfigured", which
 * turns `/health` 503 and keeps a 404 from ever reading as `unknown_market`. It also keeps which
 * endpoints answered 2xx since then: the evidence relay/poll/not-found.ts judges a refused id by.
 */

import type { UpstreamClient, UpstreamRequestEvent } from '../../upstream/client.ts';
import { UpstreamHttpError, UpstreamInvalidJsonError, UpstreamSchemaError } from '../../upstream/errors.ts';

const WINDOW = 100;

export interface UpstreamHealthSnapshot {
  lastSuccessAt: number | undefined;
  /** The last time upstream's address answered at all (any status, any body). */
  lastAnswerAt: number | undefined;
  lastFailureAt: number | undefined;
  lastError: string | undefined;
  /** Failed attempts / attempts over the last 100 attempts (0 when none). */
  errorRate: number;
  /** Latency of recent successful attempts, oldest first, in ms (for the status page's sparkline). */
  recentLatencyMs: number[];
  identity: UpstreamIdentity;
  /** Upstream's 429 answers since start, and the time of the last one. */
  rateLimited: { total: number; lastAt: number | undefined };
}

/** unverified: no `/health` answer yet; mismatch: an answer, but not upstream's (see `problem`). */
export type UpstreamIdentity =
  | { state: 'unverified' | 'verified'; problem?: undefined }
  | { state: 'mismatch'; problem: string };

export interface UpstreamHealthOptions {
  /** Told when the identity changes (for the log). */
  onIdentity?: (identity: UpstreamIdentity) => void;
}

export class UpstreamHealthMonitor {
  readonly #client: UpstreamClient;
  readonly #outcomes: boolean[] = [];
  readonly #latencies: number[] = [];
  #lastSuccessAt: number | undefined;
  #lastAnswerAt: number | undefined;
  #lastFailureAt: number | undefined;
  #lastError: string | undefined;
  #rateLimited = 0;
  #lastRateLimitedAt: number | undefined;
  #probe: NodeJS.Timeout | undefined;
  #identity: UpstreamIdentity = { state: 'unverified' };
  /** Route templates, and their services, that answered 2xx since the identity was last a mismatch. */
  readonly #answering = new Set<string>();
  readonly #answeringServices = new Set<string>();
  readonly #onIdentity: (identity: UpstreamIdentity) => void;
  #onRateLimited: (retryAfterMs: number | undefined) => void = () => {};
  readonly #onRequest = (event: UpstreamRequestEvent) => this.#record(event);

  constructor(client: UpstreamClient, options: UpstreamHealthOptions = {}) {
    this.#client = client;
    this.#onIdentity = options.onIdentity ?? (() => {});
    client.events.on('request', this.#onRequest);
  }

  /** Probes at once, then every `everyMs`: one light request that also re-checks upstream's identity. */
  async start(everyMs: number): Promise<void> {
    await this.#probeOnce();
    this.#probe = setInterval(() => void this.#probeOnce(), everyMs);
    this.#probe.unref();
  }

  /** Upstream answered `/health` as upstream does, the last time it answered at all. */
  get verified(): boolean {
    return this.#identity.state === 'verified';
  }

  /** `endpoint` answered 2xx since upstream last showed it is not upstream. */
  answers(endpoint: string): boolean {
    return this.#answering.has(endpoint);
  }

  serviceAnswers(endpoint: string): boolean {
    return this.#answeringServices.has(serviceOf(endpoint));
  }

  /**
   * Tells `listener` of every 429 upstream answers, a poll's or not, with its wait when it gave one:
   * the poll side's rate follows them (docs/scheduler.md "Rate limits"). One listener of the
   * client's requests in the poll side, so that a request's report enters it once.
   */
  followRateLimits(listener: (retryAfterMs: number | undefined) => void): void {
    this.#onRateLimited = listener;
  }

  stop(): void {
    clearInterval(this.#probe);
    this.#client.events.off('request', this.#onRequest);
  }

  snapshot(): UpstreamHealthSnapshot {
    const failures = this.#outcomes.filter((ok) => !ok).length;
    return {
      lastSuccessAt: this.#lastSuccessAt,
      lastAnswerAt: this.#lastAnswerAt,
      lastFailureAt: this.#lastFailureAt,
      lastError: this.#lastError,
      errorRate: this.#outcomes.length === 0 ? 0 : failures / this.#outcomes.length,
      recentLatencyMs: [...this.#latencies],
      identity: this.#identity,
      rateLimited: { total: this.#rateLimited, lastAt: this.#lastRateLimitedAt },
    };
  }

  async #probeOnce(): Promise<void> {
    try {
      await this.#client.health();
      this.#setIdentity({ state: 'verified' });
    } catch (error) {
      // Recorded through the request event. A timeout, a refused connection, a 5xx, a 429 or a
      // body that cannot be decoded says nothing about who answers; a wrong body, a redirect or a
      // 4xx does.
      if (
        error instanceof UpstreamSchemaError ||
        error instanceof UpstreamInvalidJsonError ||
        (error instanceof UpstreamHttpError && showsWrongAddress(error))
      ) {
        this.#setIdentity({ state: 'mismatch', problem: error.message });
      }
    }
  }

  #setIdentity(identity: UpstreamIdentity): void {
    if (identity.state === this.#identity.state && identity.problem === this.#identity.problem) return;
    this.#identity = identity;
    if (identity.state === 'mismatch') {
      this.#answering.clear();
      this.#answeringServices.clear();
    }
    this.#onIdentity(identity);
  }

  #record(event: UpstreamRequestEvent): void {
    if (event.status !== undefined) this.#lastAnswerAt = Date.now();
    if (event.outcome === 'ok') {
      this.#answering.add(event.endpoint);
      this.#answeringServices.add(serviceOf(event.endpoint));
    }
    // Upstream refusing an id on a path that works is upstream answering correctly; another
    // service's 404 is not.
    const refusedId =
      (event.status === 404 || event.status === 400) &&
      event.code !== 'upstream_unavailable' &&
      this.#answering.has(event.endpoint);
    const ok = event.outcome === 'ok' || (this.verified && refusedId);
    this.#outcomes.push(ok);
    if (this.#outcomes.length > WINDOW) this.#outcomes.shift();
    if (ok) {
      this.#lastSuccessAt = Date.now();
      this.#latencies.push(event.durationMs);
      if (this.#latencies.length > WINDOW) this.#latencies.shift();
    } else {
      this.#lastFailureAt = Date.now();
      if (event.outcome === 'rate_limited') {
        this.#rateLimited += 1;
        this.#lastRateLimitedAt = this.#lastFailureAt;
        this.#onRateLimited(event.retryAfterMs);
      }
      this.#lastError = `${event.endpoint}: ${event.outcome}${event.status === undefined ? '' : ` ${event.status}`}`;
    }
  }
}

/** `GET /api/tokens/price/:feedId` -> `/api`: the first segment of a route template's path. */
function serviceOf(endpoint: string): string {
  const path = endpoint.slice(endpoint.indexOf(' ') + 1);
  return `/${path.split('/')[1] ?? ''}`;
}

/** A redirect (the address moved, or wants another scheme) or a 4xx other than 429. */
function showsWrongAddress(error: UpstreamHttpError): boolean {
  return error.status >= 300 && error.status < 500 && error.status !== 429;
}
