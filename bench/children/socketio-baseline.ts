/**
 * @module bench/children/socketio-baseline
 * The other usual pick: socket.io (WebSocket transport only, no long-polling). Each of a client's
 * topics is a room; each room gets `io.to(room).emit('m', message)` (paced as the other baselines), which socket.io encodes once
 * per broadcast and writes to each member.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from 'socket.io';
import { type BroadcastPlan, baselineMessage, Pacer, topicsOf } from '../lib/baselines/baseline-frame.ts';
import { serveIpc } from '../lib/ipc.ts';
import { memoryAfterGc, sampleUsage } from '../lib/usage.ts';

const http = createServer();
const io = new Server(http, { transports: ['websocket'], serveClient: false, perMessageDeflate: false });
const topics = new Set<number>();
let welcomeBytes = 0;

io.on('connection', (socket) => {
  const { topics: list } = socket.handshake.query;
  for (const topic of topicsOf(typeof list === 'string' ? list : undefined)) {
    topics.add(topic);
    void socket.join(`t${topic}`);
    if (welcomeBytes > 0) socket.emit('m', baselineMessage(welcomeBytes, topic, 0));
  }
});

await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', () => resolve()));

let pacer: Pacer | undefined;

function start(plan: BroadcastPlan): void {
  // socket.io frames carry `42["m",` and `]` around the JSON: pad a little less.
  const bytes = plan.frameBytes - 8;
  pacer = new Pacer(plan, topics, (topic, seq, rts) => {
    io.to(`t${topic}`).emit('m', baselineMessage(bytes, topic, seq, rts));
  });
}

const { port } = http.address() as AddressInfo;
serveIpc({
  ready: () => ({ url: `http://127.0.0.1:${port}` }),
  welcome: (payload) => {
    welcomeBytes = (payload as { bytes: number }).bytes;
  },
  start: (payload) => start(payload as BroadcastPlan),
  paced: () => pacer?.sample(),
  usage: () => sampleUsage(),
  memory: () => memoryAfterGc(),
});
process.on('SIGTERM', () => {
  pacer?.stop();
  process.exit(0);
});
