/**
 * @module test/support/harness
 * Starts a simulator (manual ticks unless asked otherwise) and a relay against it, both on port 0,
 * with fast polls; `stop()` closes both. Also reads the simulator's own view of a market, which is
 * what the relay's streams are checked against.
 */

import pino from 'pino';
import { afterEach } from 'vitest';
import type { BookState } from '../../packages/protocol/src/protocol/book.ts';
import type { BookDepth } from '../../packages/protocol/src/protocol/messages.ts';
import { limitDepth } from '../../src/relay/channels/book/codec.ts';
import { aggregateBook } from '../../src/relay/channels/book/levels.ts';
import { type Relay, type RelayConfig, startRelay } from '../../src/relay-server.ts';
import {
  type SimulatorHandle,
  type SimulatorOptions,
  type SimulatorProfileName,
  startSimulator,
} from '../../src/sim/server.ts';
import { clobPriceBatchResponse, type OrderBook, orderBook } from '../../src/upstream/schemas.ts';

export interface Harness {
  sim: SimulatorHandle;
  relay: Relay;
  stop(): Promise<void>;
}

export async function startHarness(
  options: { sim?: SimulatorOptions; relay?: Partial<RelayConfig> } = {},
): Promise<Harness> {
  const sim = await startSimulator({ markets: 8, seed: 7, tickMs: 0, ...options.sim });
  const relay = await startHarnessRelay(sim, options.relay);
  return {
    sim,
    relay,
    async stop() {
      await relay.close();
      await sim.close();
    },
  };
}

/**
 * A relay against `sim` with the harness's fast polls; a test may start a second one (a restarted
 * relay) against the same simulator.
 */
export function startHarnessRelay(sim: SimulatorHandle, relay: Partial<RelayConfig> = {}): Promise<Relay> {
  return startRelay(
    {
      port: 0,
      host: '127.0.0.1',
      upstream: sim.url,
      bookPollMs: 20,
      pricePollMs: 20,
      upstreamConcurrency: 16,
      upstreamRps: 1000,
      logLevel: 'silent',
      simMarkets: 8,
      simSeed: 7,
      ...relay,
      tuning: {
        heartbeatMs: 60_000,
        lingerMs: 2_000,
        // Polls every 20 ms: at the relay's default factor of 3 a loaded CI machine's 60 ms answer
        // already reads as stale. Tests about staleness itself still see it, half a second later.
        staleAfterFactor: 25,
        // Every test client connects from 127.0.0.1, many within a second; the edge tests set their own.
        edge: { connectionsPerSecondPerAddress: 1_000, connectionBurstPerAddress: 1_000 },
        ...relay.tuning,
      },
    },
    pino({ level: 'silent' }),
  );
}

/** Anything a test opens that must be closed before its harness stops. */
export interface Closable {
  close(): unknown;
}

export interface HarnessFixture {
  /** What the test opened (clients, proxies): closed after each test, before the harness stops. */
  readonly opened: Closable[];
  /** Starts this test's harness, which is stopped after the test. */
  start(options?: Parameters<typeof startHarness>[0]): Promise<Harness>;
}

/**
 * The set-up and tear-down the harness tests share: call once inside a `describe`; after each test
 * it closes what the test opened, then stops the harness the test started. With `profile`, every
 * simulator it starts answers with that profile (sim/profile.ts) unless the test says otherwise.
 */
export function useHarness(profile?: SimulatorProfileName): HarnessFixture {
  const opened: Closable[] = [];
  let started: Harness | undefined;
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((resource) => resource.close()));
    await started?.stop();
    started = undefined;
  });
  return {
    opened,
    async start(options = {}) {
      started = await startHarness({ ...options, sim: { ...(profile && { profile }), ...options.sim } });
      return started;
    },
  };
}

/** The simulator's order book over HTTP, as an upstream client would see it. */
export async function upstreamBook(sim: SimulatorHandle, market: string): Promise<OrderBook> {
  const response = await fetch(`${sim.url}/clob/orderbook?market_id=${market}`);
  return orderBook.parse(await response.json());
}

/** What a book stream of `depth` should show for an upstream book. */
export function expectedBook(book: OrderBook, depth: BookDepth): BookState {
  return limitDepth(aggregateBook(book), depth);
}

export async function upstreamPrices(sim: SimulatorHandle, markets: string[]) {
  const response = await fetch(`${sim.url}/clob/market-prices/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ market_ids: markets }),
  });
  return clobPriceBatchResponse.parse(await response.json()).data;
}
