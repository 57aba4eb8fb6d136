/**
 * @module relay/upstream-health
 * What the relay knows of upstream's reachability: the time of the last successful request, the
 * error rate over recent attempts, the last error. Fed by every request the client makes; while
 * polling is idle (nobody subscribed) a light probe of upstream `GET /health` keeps it honest.
 */
import type { UpstreamClient, UpstreamRequestEvent } from '../upstream/client.ts';

const WINDOW = 100;

export interface UpstreamHealthSnapshot {
  lastSuccessAt: number | undefined;
  lastFailureAt: number | undefined;
  lastError: string | undefined;
  /** Failed attempts / attempts over the last 100 attempts (0 when none). */
  errorRate: number;
  /** Latency of recent successful attempts, oldest first, in ms (for the status page's sparkline). */
  recentLatencyMs: number[];
}

export class UpstreamHealthMonitor {
  readonly #client: UpstreamClient;
  readonly #outcomes: boolean[] = [];
  readonly #latencies: number[] = [];
  #lastSuccessAt: number | undefined;
  #lastFailureAt: number | undefined;
  #lastError: string | undefined;
  #probe: NodeJS.Timeout | undefined;
  readonly #onRequest = (event: UpstreamRequestEvent) => this.#record(event);

  constructor(client: UpstreamClient) {
    this.#client = client;
    client.events.on('request', this.#onRequest);
  }

  /** Probes at once, then every `everyMs` when no request succeeded in that time. */
  async start(everyMs: number): Promise<void> {
    await this.#probeOnce();
    this.#probe = setInterval(() => {
      if (this.#lastSuccessAt === undefined || Date.now() - this.#lastSuccessAt >= everyMs)
        void this.#probeOnce();
    }, everyMs);
    this.#probe.unref();
  }

  stop(): void {
    clearInterval(this.#probe);
    this.#client.events.off('request', this.#onRequest);
  }

  snapshot(): UpstreamHealthSnapshot {
    const failures = this.#outcomes.filter((ok) => !ok).length;
    return {
      lastSuccessAt: this.#lastSuccessAt,
      lastFailureAt: this.#lastFailureAt,
      lastError: this.#lastError,
      errorRate: this.#outcomes.length === 0 ? 0 : failures / this.#outcomes.length,
      recentLatencyMs: [...this.#latencies],
    };
  }

  async #probeOnce(): Promise<void> {
    try {
      await this.#client.health();
    } catch {
      // Recorded through the request event; a probe failure is a fact to report, not to throw.
    }
  }

  #record(event: UpstreamRequestEvent): void {
    // A 404 is upstream answering correctly about a market that does not exist.
    const ok = event.outcome === 'ok' || (event.outcome === 'http_error' && event.status === 404);
    this.#outcomes.push(ok);
    if (this.#outcomes.length > WINDOW) this.#outcomes.shift();
    if (ok) {
      this.#lastSuccessAt = Date.now();
      this.#latencies.push(event.durationMs);
      if (this.#latencies.length > WINDOW) this.#latencies.shift();
    } else {
      this.#lastFailureAt = Date.now();
      this.#lastError = `${event.endpoint}: ${event.outcome}${event.status === undefined ? '' : ` ${event.status}`}`;
    }
  }
}
