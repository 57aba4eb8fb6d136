/**
 * @module test/support/flood-relay
 * The fixture of the flood tests (test/e2e/floods/): a real relay with the shipped limits, a
 * flooder in a process of its own (bench/children/flooder.ts), and a well-behaved client of the
 * book and price of 4 busy markets whose largest gap between two messages of a stream is measured
 * before a flood (its baseline) and during it. Each flood file starts its own.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { type Child, forkChild } from '../../bench/lib/ipc.ts';
import type { AttackReport } from '../../bench/lib/soak/attackers.ts';
import { defaultTuning } from '../../src/config/tuning.ts';
import { type Message, ProtocolClient } from './clients/protocol-client.ts';
import { type Harness, startHarness } from './harness.ts';
import { waitFor } from './wait-for.ts';

const POLL_MS = 250;
const BASELINE_MS = 2_000;
/**
 * The shipped limits but for the two waits, at their lowest (the mechanism is the same, a file runs
 * in seconds): closed after 1 s over the request rate (the option's minimum), half a second to read
 * up to the close frame.
 */
export const CONNECTION_LIMITS = { ...defaultTuning.connection, floodCloseAfterMs: 1_000, closeGraceMs: 500 };
/**
 * Longer than the flood close plus the close grace: a flooder whose own send buffer is full cannot
 * finish the close handshake, so it sees its 4429 when the relay drops the socket.
 */
export const ATTACK_MS = 2_500;

/** The well-behaved client's view over a window: the largest gap of any stream, and its states. */
class GapWatch {
  readonly #last = new Map<string, number>();
  #largest = 0;
  #stale = 0;

  constructor(client: ProtocolClient) {
    const original = client.messages.push.bind(client.messages);
    client.messages.push = (...messages: Message[]) => {
      for (const message of messages) this.#see(message);
      return original(...messages);
    };
  }

  restart(): void {
    const now = performance.now();
    for (const key of this.#last.keys()) this.#last.set(key, now);
    this.#largest = 0;
    this.#stale = 0;
  }

  /** Largest gap so far, counting the time since each stream's last message. */
  largestGapMs(): number {
    const now = performance.now();
    return Math.max(this.#largest, ...[...this.#last.values()].map((seen) => now - seen));
  }

  get staleReports(): number {
    return this.#stale;
  }

  #see(message: Message): void {
    if (message.type === 'status' && message.state !== 'live') this.#stale += 1;
    if (message.type !== 'snapshot' && message.type !== 'update') return;
    const key = `${String(message.channel)}:${String(message.market)}`;
    const now = performance.now();
    const last = this.#last.get(key);
    if (last !== undefined) this.#largest = Math.max(this.#largest, now - last);
    this.#last.set(key, now);
  }
}

export interface FloodRelay {
  /** Close codes the relay sent since the current flood began. */
  readonly closedWith: readonly number[];
  /**
   * Floods the relay for ATTACK_MS from `connections` connections, and on until `until` holds
   * when given (a flooder slowed by a busy machine takes longer to reach a limit), then checks the
   * well-behaved client: every stream `live`, no violation, its largest gap within twice its
   * baseline.
   */
  underFlood(connections: number, reading: boolean, until?: () => boolean): Promise<FloodReport>;
}

/** Starts the relay, the flooder and the well-behaved client before the file's tests; stops them after. */
export function useFloodRelay(): FloodRelay {
  let harness: Harness;
  let flooder: Child;
  let observer: ProtocolClient;
  let watch: GapWatch;
  let baselineGapMs = 0;
  const closedWith: number[] = [];

  beforeAll(async () => {
    harness = await startHarness({
      sim: { markets: 12, tickMs: 100 },
      // The shipped limits (the harness loosens the per-address rate for its many test clients).
      relay: {
        bookPollMs: POLL_MS,
        pricePollMs: POLL_MS,
        tuning: { edge: defaultTuning.edge, connection: CONNECTION_LIMITS },
      },
    });
    harness.relay.events.on('connection:close', ({ code }) => closedWith.push(code));
    flooder = await forkChild('flooder');
    // Markets with a two-sided quote: their books and prices move on every tick.
    const withoutPrice = new Set(harness.sim.market.marketIdsWithoutPriceData());
    const markets = harness.sim.market
      .activeMarketIds()
      .filter((market) => !withoutPrice.has(market))
      .slice(0, 4);
    observer = await ProtocolClient.connect(harness.relay.url);
    watch = new GapWatch(observer);
    await observer.request({ op: 'subscribe', channel: 'book', markets, depth: 10 });
    await observer.request({ op: 'subscribe', channel: 'price', markets });
    await waitFor('snapshots', () => markets.every((market) => observer.view('book', market, 10)));
    watch.restart();
    await new Promise((resolve) => setTimeout(resolve, BASELINE_MS));
    // A quiet book may not change for a few polls: the baseline is at least four poll intervals.
    baselineGapMs = Math.max(watch.largestGapMs(), 4 * POLL_MS);
  }, 60_000);
  afterAll(async () => {
    await flooder?.stop();
    await observer?.close();
    await harness?.stop();
  });

  return {
    closedWith,
    async underFlood(connections, reading, until) {
      closedWith.length = 0;
      watch.restart();
      await flooder.request('start', {
        url: harness.relay.url,
        spec: { kind: 'flood', connections, reading },
      });
      const startedAt = performance.now();
      await new Promise((resolve) => setTimeout(resolve, ATTACK_MS));
      if (until !== undefined) await waitFor('the flood to reach its limit', () => until());
      const report = await flooder.request<AttackReport>('stop');
      const durationMs = performance.now() - startedAt;
      const gap = watch.largestGapMs();
      expect(
        gap,
        `largest gap ${gap.toFixed(0)} ms, baseline ${baselineGapMs.toFixed(0)} ms`,
      ).toBeLessThanOrEqual(2 * baselineGapMs);
      expect(watch.staleReports).toBe(0);
      expect(observer.violations).toEqual([]);
      expect(observer.closeCode).toBeUndefined();
      return { ...report, durationMs };
    },
  };
}

/** What a flood did, and how long it lasted. */
export interface FloodReport extends AttackReport {
  durationMs: number;
}

/** Answers a flood may get: the burst, the rate and one refusal per second of each connection. */
export function mostReplies(report: FloodReport): number {
  const seconds = report.durationMs / 1000 + 1;
  const { requestBurst, requestsPerSecond } = CONNECTION_LIMITS;
  return report.connections * (requestBurst + seconds * (requestsPerSecond + 1));
}
