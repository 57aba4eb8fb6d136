/**
 * @module test/support/cluster/rate-gates
 * The fixture of the cluster budget's gate tests (test/cluster/budget/redis-rate-gate*.test.ts): a private
 * redis-server, gates on it (one a relay), callers that take every token they are given, and the
 * count of what the gates let through over a window. Gates and callers are stopped after each test.
 */
import { setMaxListeners } from 'node:events';
import { afterEach } from 'vitest';
import { RedisRateGate } from '../../../src/relay/coordination/redis/rate-gate.ts';
import { waitFor } from '../wait-for.ts';
import { useRedis } from './redis.ts';

export const RPS = 30;
/** Each count's window: its bound (the budget over it plus a burst) is still well below three budgets'. */
export const WINDOW_MS = 1_500;

export function useRateGates() {
  const redis = useRedis();
  const gates: RedisRateGate[] = [];
  let stopping = new AbortController();
  afterEach(async () => {
    stopping.abort();
    stopping = new AbortController();
    await Promise.all(gates.splice(0).map((gate) => gate.close()));
  });

  function gate(failOpenFraction = 0.5): RedisRateGate {
    const created = new RedisRateGate({
      topology: { kind: 'single', url: redis.server.url },
      instanceId: `gate-${gates.length}`,
      rps: RPS,
      failOpenFraction,
    });
    gates.push(created);
    return created;
  }

  /** Four callers per gate taking tokens as fast as they are given; counts what each gate let through. */
  function hammer(of: RedisRateGate[]): number[] {
    const counts = of.map(() => 0);
    // Every caller waits on the one stop signal, as every upstream call does on the transport's.
    setMaxListeners(0, stopping.signal);
    of.forEach((one, index) => {
      for (let caller = 0; caller < 4; caller++) {
        void (async () => {
          while (!stopping.signal.aborted) {
            try {
              await one.acquire(stopping.signal);
              counts[index]! += 1;
            } catch {
              return;
            }
          }
        })();
      }
    });
    return counts;
  }

  /** Tokens let through over the next `ms`, and the seconds that really took. */
  async function countOver(counts: number[], ms: number): Promise<{ taken: number; seconds: number }> {
    const sum = () => counts.reduce((total, count) => total + count, 0);
    const [before, startedAt] = [sum(), performance.now()];
    const until = startedAt + ms;
    await waitFor(`${ms} ms to pass`, () => performance.now() >= until, {
      timeoutMs: ms + 5_000,
      everyMs: 50,
    });
    return { taken: sum() - before, seconds: (performance.now() - startedAt) / 1000 };
  }

  return { redis, gates, gate, hammer, countOver };
}
