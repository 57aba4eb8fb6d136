/**
 * @module bench/children/flooder
 * Hostile clients (bench/lib/soak/attackers.ts) in a process of their own, so that their sending does not
 * share an event loop with the relay or the well-behaved client under test (test/e2e/floods/,
 * `npm run soak`).
 */

import { serveIpc } from '../lib/ipc.ts';
import { type Attack, type AttackSpec, startAttack } from '../lib/soak/attackers.ts';

let attack: Attack | undefined;

serveIpc({
  ready: () => ({}),
  start: (payload) => {
    const { url, spec } = payload as { url: string; spec: AttackSpec };
    attack = startAttack(url, spec);
  },
  stop: async () => {
    const report = await attack?.stop();
    attack = undefined;
    return report;
  },
});
process.on('SIGTERM', () => process.exit(0));
