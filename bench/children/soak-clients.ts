/**
 * @module bench/children/soak-clients
 * The long soak's passing crowd (bench/lib/long-soak/clients.ts) in a process of its own, so that
 * its thousands of sockets never delay the orchestrator's sampling or its observers.
 */
import { serveIpc } from '../lib/ipc.ts';
import { Crowd, type CrowdOptions } from '../lib/long-soak/clients.ts';

let crowd: Crowd | undefined;

serveIpc({
  ready: () => true,
  start: async (options) => {
    crowd = new Crowd(options as CrowdOptions);
    await crowd.start();
  },
  report: () => crowd?.report(),
  stop: () => crowd?.stop(),
});
