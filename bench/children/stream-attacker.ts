/**
 * @module bench/children/stream-attacker
 * The clients of one `npm run soak -- --attacks` attack (bench/lib/soak/stream-attacks.ts) in a process
 * of their own, so that their work shares an event loop with neither the relay nor the neighbour.
 */
import { serveIpc } from '../lib/ipc.ts';
import { type StreamAttack, type StreamAttackSpec, streamAttack } from '../lib/soak/stream-attacks.ts';

let attack: StreamAttack | undefined;

serveIpc({
  ready: () => ({}),
  start: (payload) => {
    const { url, spec } = payload as { url: string; spec: StreamAttackSpec };
    attack = streamAttack(url, spec);
  },
  stop: async () => {
    const report = await attack?.stop();
    attack = undefined;
    return report;
  },
});
process.on('SIGTERM', () => process.exit(0));
