/**
 * The `rest` benchmark's premise (bench/scenarios/rest.ts): the simulator it starts for 1,000 streams
 * offers 1,000 distinct public paths, each in the relay's one spelling and each answered, so that
 * every stream of the run is a real, separate poll.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restCatalogueOf, restLoadPaths, simMarketsFor } from '../../bench/lib/rest-load.ts';
import { canonicalRestPath } from '../../packages/protocol/src/protocol/rest-paths.ts';
import { type SimulatorHandle, startSimulator } from '../../src/sim/server.ts';

const STREAMS = 1_000;

describe('the rest benchmark’s paths', () => {
  let sim: SimulatorHandle;
  beforeAll(async () => {
    // As the bench's simulator child starts it, without ticking.
    sim = await startSimulator({ markets: simMarketsFor(STREAMS), seed: 1, tickMs: 0 });
  });
  afterAll(async () => {
    await sim.close();
  });

  it('are 1,000 distinct public paths in canonical spelling, every one answered 200', async () => {
    const catalogue = restCatalogueOf(sim.market);
    const paths = restLoadPaths(catalogue.usernames, catalogue.heldMarkets, STREAMS);
    expect(new Set(paths).size).toBe(STREAMS);
    for (const path of paths) {
      const canonical = canonicalRestPath(path);
      expect(canonical.ok && canonical.value.path).toBe(path);
    }
    const failures: string[] = [];
    for (let at = 0; at < paths.length; at += 50) {
      await Promise.all(
        paths.slice(at, at + 50).map(async (path) => {
          const response = await fetch(`${sim.url}${path}`);
          await response.arrayBuffer();
          if (response.status !== 200) failures.push(`${path}: ${response.status}`);
        }),
      );
    }
    expect(failures).toEqual([]);
  });

  it('keep the mix of users’ and markets’ paths at a small count', () => {
    const catalogue = restCatalogueOf(sim.market);
    const paths = restLoadPaths(catalogue.usernames, catalogue.heldMarkets, 10);
    expect(paths.filter((path) => path.startsWith('/api/users/'))).toHaveLength(5);
    expect(paths.filter((path) => path.startsWith('/api/markets/'))).toHaveLength(5);
  });

  it('refuse to make up a count the catalogue cannot give', () => {
    expect(() => restLoadPaths(['alice'], [], 8)).toThrow(/only 7 distinct paths from 1 users and 0 markets/);
  });
});
