/**
 * @module bench/children/fastify-baseline
 * A diagnostic baseline for scenario 3 only: the relay's own HTTP stack (fastify with
 * @fastify/websocket) holding bare sockets, no relay logic. It splits the relay's memory per
 * connection into what the framework costs and what the relay's connection state costs.
 */
import websocket from '@fastify/websocket';
import Fastify from 'fastify';
import type { WebSocket } from 'ws';
import { baselineMessage } from '../lib/baselines/baseline-frame.ts';
import { serveIpc } from '../lib/ipc.ts';
import { memoryAfterGc, sampleUsage } from '../lib/usage.ts';

const app = Fastify({ logger: false });
await app.register(websocket, { options: { perMessageDeflate: false } });
const clients = new Set<WebSocket>();
let welcomeBytes = 0;

app.get('/', { websocket: true }, (ws) => {
  clients.add(ws);
  ws.on('close', () => clients.delete(ws));
  if (welcomeBytes > 0) ws.send(JSON.stringify(baselineMessage(welcomeBytes, 0, 0)));
});
const address = await app.listen({ port: 0, host: '127.0.0.1' });

serveIpc({
  ready: () => ({ url: `${address.replace(/^http/, 'ws')}/` }),
  welcome: (payload) => {
    welcomeBytes = (payload as { bytes: number }).bytes;
  },
  usage: () => sampleUsage(),
  memory: () => memoryAfterGc(),
});
process.on('SIGTERM', () => {
  void app.close().finally(() => process.exit(0));
});
