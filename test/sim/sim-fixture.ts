/**
 * @module test/sim/sim-fixture
 * A simulator on port 0 with a fake clock and manual ticks, plus small fetch helpers, shared by
 * the HTTP tests of test/sim.
 */
import { z } from 'zod';
import { type SimulatorHandle, type SimulatorOptions, startSimulator } from '../../src/sim/server.ts';

/** The default profile's error body (sim/profile.ts); upstream's own shape is not shown. */
export const errorBody = z.object({ success: z.literal(false), error: z.string() });

export const START = Date.UTC(2025, 0, 6, 12, 0, 0);

export interface SimFixture {
  sim: SimulatorHandle;
  clock: { now: () => number; advance: (ms: number) => void };
}

export async function startFixture(options: SimulatorOptions = {}): Promise<SimFixture> {
  let time = START;
  const clock = {
    now: () => time,
    advance: (ms: number): void => {
      time += ms;
    },
  };
  const sim = await startSimulator({ tickMs: 0, now: clock.now, ...options });
  return { sim, clock };
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

export async function getJson(sim: SimulatorHandle, path: string, init?: RequestInit): Promise<JsonResponse> {
  const response = await fetch(`${sim.url}${path}`, init);
  return { status: response.status, headers: response.headers, body: await response.json() };
}

export function postJson(sim: SimulatorHandle, path: string, body: unknown): Promise<JsonResponse> {
  return getJson(sim, path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}
