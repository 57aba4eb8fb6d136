/**
 * @module test/support/upstream-state
 * What the simulator answers now, read over HTTP as an upstream client would, a clock the test
 * moves, and the wait for a client's rebuilt state to equal upstream's: shared by the end-to-end
 * tests of the market, probabilities and oracle channels.
 */
import { expect } from 'vitest';
import type { Channel, OracleData, ProbabilitiesData } from '../../src/protocol/messages.ts';
import type { SimulatorHandle } from '../../src/sim/server.ts';
import { marketResponse, probabilitiesResponse, tokenPriceResponse } from '../../src/upstream/schemas.ts';
import type { MessageRecorder } from './message-recorder.ts';
import { waitFor } from './wait-for.ts';

/** A simulator clock the test moves: a second per round, so oracle publish times advance. */
export function testClock(): { now: () => number; advance: (ms: number) => void } {
  let time = Date.now();
  return {
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
  };
}

async function upstreamJson(sim: SimulatorHandle, path: string): Promise<unknown> {
  return (await fetch(`${sim.url}${path}`)).json();
}

export async function upstreamMarket(sim: SimulatorHandle, market: string) {
  return marketResponse.parse(await upstreamJson(sim, `/api/markets/${market}`)).market;
}

export async function upstreamProbabilities(sim: SimulatorHandle): Promise<ProbabilitiesData> {
  return probabilitiesResponse.parse(await upstreamJson(sim, '/api/markets/probabilities')).probabilities;
}

export async function upstreamOracle(sim: SimulatorHandle, feed: string): Promise<OracleData> {
  const { feed_id, price, raw_price, expo, publish_time } = tokenPriceResponse.parse(
    await upstreamJson(sim, `/api/tokens/price/${feed}`),
  );
  return { feed_id, price, raw_price, expo, publish_time };
}

/** Waits until the client's rebuilt state of the stream equals `expected`. */
export async function expectState(client: MessageRecorder, channel: Channel, id: string, expected: unknown) {
  await waitFor(`${channel}:${id} equal to upstream`, () => {
    const state = client.view(channel, id)?.state;
    return JSON.stringify(state) === JSON.stringify(expected) || undefined;
  }).catch((error: unknown) => {
    expect(client.view(channel, id)?.state).toEqual(expected);
    throw error;
  });
}
