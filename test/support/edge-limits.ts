/**
 * @module test/support/edge-limits
 * Harness options for the edge-limit tests (WebSocket and SSE): every per-address and per-key cap
 * generous except those a test sets, and a short close grace.
 */

import type { EdgeLimits } from '../../src/relay/admission/edge.ts';
import type { RelayConfig } from '../../src/relay-server.ts';
import type { SimulatorOptions } from '../../src/sim/server.ts';

const generous: EdgeLimits = {
  maxConnectionsPerAddress: 1_000,
  connectionsPerSecondPerAddress: 1_000,
  connectionBurstPerAddress: 1_000,
  maxConnectionsPerKey: 1_000,
  maxPendingConnections: 1_000,
  maxPendingPerAddress: 1_000,
  headersTimeoutMs: 10_000,
  trustedProxyDepth: 0,
  ipv6PrefixLength: 64,
  authFreeFailures: 1_000,
  authLockoutFailures: 1_000,
  authLockoutMs: 60_000,
};

export function edgeLimitsHarness(
  edge: Partial<EdgeLimits>,
  relay: Partial<RelayConfig> = {},
  sim: SimulatorOptions = {},
): { sim: SimulatorOptions; relay: Partial<RelayConfig> } {
  return {
    sim,
    relay: { ...relay, tuning: { edge: { ...generous, ...edge }, connection: { closeGraceMs: 200 } } },
  };
}
