/**
 * @module bench/children/flooder
 * Hostile clients (bench/lib/attackers.ts) in a process of their own, so that their sending does not
 * share an event loop with the relay or the well-behaved client under test (test/e2e/floods.test.ts).
 */
import { type Attack, flood } from '../lib/attackers.ts';
import { serveIpc } from '../lib/ipc.ts';

let attack: Attack | undefined;

serveIpc({
  ready: () => ({}),
  flood: (payload) => {
    const { url, connections, reading } = payload as { url: string; connections: number; reading: boolean };
    attack = flood(url, { connections, reading });
  },
  stop: async () => {
    const report = await attack?.stop();
    attack = undefined;
    return report;
  },
});
process.on('SIGTERM', () => process.exit(0));
