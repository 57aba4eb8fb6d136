/**
 * @module observability/activity
 * Recent activity for the status page: per-second counts of stream messages, bytes and upstream
 * requests over the last minute (the update rate and its sparkline), running error totals, and the
 * last few notable errors in words. Fed by RelayEvents and the upstream client's request events.
 */

import type { RelayEvents } from '../relay/events.ts';
import { type RefusalReason, refusalReasons } from '../relay/events.ts';
import type { UpstreamClient, UpstreamRequestEvent } from '../upstream/client.ts';
import { onRelayEvent } from './relay-view.ts';

/** Seconds of per-second history kept. */
export const ACTIVITY_WINDOW_S = 60;
/** Rates are averaged over this many whole seconds (the current, partial second is left out). */
const RATE_SPAN_S = 5;
const RECENT_ERRORS = 20;

interface Second {
  at: number;
  messages: number;
  bytes: number;
  upstreamRequests: number;
}

export interface ActivityError {
  at: string;
  kind: 'upstream' | 'stream' | 'slow_consumer' | 'request' | 'refusal';
  message: string;
}

export interface ActivityReport {
  messagesPerSecond: number;
  bytesPerSecond: number;
  upstreamRequestsPerSecond: number;
  /** Stream messages sent per second, oldest first, one entry per second of the window. */
  messagesSeries: number[];
  totals: {
    upstreamFailures: number;
    requestErrors: number;
    slowConsumerCloses: number;
    conflations: number;
    /** Connections the edge turned away, by reason (docs/operations.md "Refusals"). */
    refusals: Record<RefusalReason, number>;
  };
  recentErrors: ActivityError[];
}

export class ActivityTracker {
  readonly #now: () => number;
  readonly #seconds: Second[] = [];
  readonly #recentErrors: ActivityError[] = [];
  readonly #totals = { upstreamFailures: 0, requestErrors: 0, slowConsumerCloses: 0, conflations: 0 };
  readonly #refusals = Object.fromEntries(refusalReasons.map((reason) => [reason, 0])) as Record<
    RefusalReason,
    number
  >;
  readonly #unsubscribers: (() => void)[];
  readonly #client: UpstreamClient;
  readonly #onRequest = (event: UpstreamRequestEvent) => this.#recordRequest(event);

  constructor(sources: { events: RelayEvents; client: UpstreamClient; now?: () => number }) {
    this.#now = sources.now ?? Date.now;
    this.#client = sources.client;
    const { events } = sources;
    this.#unsubscribers = [
      onRelayEvent(events, 'stream:sent', ({ subscribers, bytes }) => {
        const second = this.#second();
        second.messages += subscribers;
        second.bytes += bytes * subscribers;
      }),
      onRelayEvent(events, 'request:error', ({ id, code }) => {
        this.#totals.requestErrors += 1;
        this.#error('request', `connection ${id}: request refused with ${code}`);
      }),
      onRelayEvent(events, 'connection:slow-consumer', ({ id, bufferedBytes }) => {
        this.#totals.slowConsumerCloses += 1;
        this.#error(
          'slow_consumer',
          `connection ${id} closed as a slow consumer (${bufferedBytes} bytes buffered)`,
        );
      }),
      onRelayEvent(events, 'edge:refused', ({ reason, lockedOut }) => {
        this.#refusals[reason] += 1;
        if (lockedOut) this.#error('refusal', 'an address locked out after repeated wrong API keys');
      }),
      onRelayEvent(events, 'connection:conflated', () => {
        this.#totals.conflations += 1;
      }),
      onRelayEvent(events, 'stream:state', ({ channel, market, state, reason }) => {
        if (state === 'live') return;
        this.#error('stream', `${channel} ${market} ${state}${reason === undefined ? '' : `: ${reason}`}`);
      }),
    ];
    this.#client.events.on('request', this.#onRequest);
  }

  close(): void {
    for (const unsubscribe of this.#unsubscribers) unsubscribe();
    this.#client.events.off('request', this.#onRequest);
  }

  report(): ActivityReport {
    const current = Math.floor(this.#now() / 1000);
    const byAt = new Map(this.#seconds.map((second) => [second.at, second]));
    const series: Second[] = [];
    for (let at = current - ACTIVITY_WINDOW_S + 1; at <= current; at++) {
      series.push(byAt.get(at) ?? { at, messages: 0, bytes: 0, upstreamRequests: 0 });
    }
    const whole = series.slice(-1 - RATE_SPAN_S, -1);
    const rate = (pick: (second: Second) => number) =>
      whole.reduce((sum, second) => sum + pick(second), 0) / RATE_SPAN_S;
    return {
      messagesPerSecond: rate((second) => second.messages),
      bytesPerSecond: rate((second) => second.bytes),
      upstreamRequestsPerSecond: rate((second) => second.upstreamRequests),
      messagesSeries: series.map((second) => second.messages),
      totals: { ...this.#totals, refusals: { ...this.#refusals } },
      recentErrors: [...this.#recentErrors],
    };
  }

  #recordRequest({ endpoint, outcome, status }: UpstreamRequestEvent): void {
    const second = this.#second();
    second.upstreamRequests += 1;
    if (outcome === 'ok' || (outcome === 'http_error' && status === 404)) return;
    this.#totals.upstreamFailures += 1;
    this.#error('upstream', `${endpoint}: ${outcome}${status === undefined ? '' : ` ${status}`}`);
  }

  #second(): Second {
    const at = Math.floor(this.#now() / 1000);
    let last = this.#seconds.at(-1);
    if (last?.at !== at) {
      last = { at, messages: 0, bytes: 0, upstreamRequests: 0 };
      this.#seconds.push(last);
      while (this.#seconds.length > 0 && this.#seconds[0]!.at <= at - ACTIVITY_WINDOW_S)
        this.#seconds.shift();
    }
    return last;
  }

  #error(kind: ActivityError['kind'], message: string): void {
    this.#recentErrors.unshift({ at: new Date(this.#now()).toISOString(), kind, message });
    if (this.#recentErrors.length > RECENT_ERRORS) this.#recentErrors.pop();
  }
}
