/**
 * The orchestrator's probes (docs/operations.md "Health"): `/livez` answers 200 while the process
 * works, upstream or not; `/readyz` answers 200 only while the relay can serve fresh data, 503 while
 * upstream is down, and 200 again when it is back.
 */
import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/sim/server.ts';
import { type Harness, startHarnessRelay, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

async function probe(url: string, path: '/livez' | '/readyz') {
  const response = await fetch(`${url}${path}`);
  return { status: response.status, body: (await response.json()) as { status: string; reason?: string } };
}

describe('GET /livez and /readyz', () => {
  let harness: Harness;
  const { opened, start } = useHarness();

  it('keep liveness at 200 while readiness follows upstream down and back', async () => {
    harness = await start({ relay: { tuning: { upstreamDownAfterMs: 200 } } });
    const { url } = harness.relay;
    await waitFor('ready', async () => (await probe(url, '/readyz')).status === 200);
    expect(await probe(url, '/livez')).toEqual({ status: 200, body: { status: 'alive' } });

    harness.sim.setFaults({ errorRate: 1 });
    const down = await waitFor('not ready', async () => {
      const answer = await probe(url, '/readyz');
      return answer.status === 503 ? answer : undefined;
    });
    expect(down.body).toEqual({ status: 'not_ready', reason: 'upstream_unreachable' });
    expect(await probe(url, '/livez')).toEqual({ status: 200, body: { status: 'alive' } });

    harness.sim.setFaults({ errorRate: 0 });
    await waitFor('ready again', async () => (await probe(url, '/readyz')).status === 200);
  });

  it('is not ready before upstream has answered once, and alive all along', async () => {
    const sim = await startSimulator({ markets: 2, seed: 7, tickMs: 0, faults: { errorRate: 1 } });
    opened.push({ close: () => sim.close() });
    const relay = await startHarnessRelay(sim);
    opened.unshift({ close: () => relay.close() });
    expect((await probe(relay.url, '/readyz')).body).toEqual({
      status: 'not_ready',
      reason: 'upstream_not_answered_yet',
    });
    expect((await probe(relay.url, '/livez')).status).toBe(200);
  });
});
