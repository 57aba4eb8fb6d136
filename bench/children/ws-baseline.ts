/**
 * @module bench/children/ws-baseline
 * The status-quo alternative to the relay's fan-out: an idiomatic `ws` broadcast server. Clients
 * pick their topics in the URL (`?topics=3,4`); every cycle each topic's message is stringified once and
 * `client.send(json)` is called for each of its clients, one write per message, as most `ws`
 * broadcast code does.
 */
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { type BroadcastPlan, baselineMessage, MessageCredit, topicsOf } from '../lib/baseline-frame.ts';
import { serveIpc } from '../lib/ipc.ts';
import { memoryAfterGc, sampleUsage } from '../lib/usage.ts';

const topics = new Map<number, Set<WebSocket>>();
/** Sent to each client on connect (scenario 3: the relay's snapshot). */
let welcomeBytes = 0;

const server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
await new Promise<void>((resolve) => server.once('listening', () => resolve()));

server.on('connection', (ws: WebSocket, request: IncomingMessage) => {
  const joined = topicsOf(new URL(request.url ?? '/', 'http://x').searchParams.get('topics'));
  const memberships: Set<WebSocket>[] = [];
  for (const topic of joined) {
    let members = topics.get(topic);
    if (members === undefined) {
      members = new Set();
      topics.set(topic, members);
    }
    members.add(ws);
    memberships.push(members);
    if (welcomeBytes > 0) ws.send(JSON.stringify(baselineMessage(welcomeBytes, topic, 0)));
  }
  ws.on('close', () => {
    for (const members of memberships) members.delete(ws);
  });
  ws.on('error', () => ws.terminate());
});

let timer: NodeJS.Timeout | undefined;

function start(plan: BroadcastPlan): void {
  let seq = 0;
  const credit = new MessageCredit(plan.messagesPerCycle);
  timer = setInterval(() => {
    const cycleStart = new Date();
    const count = credit.take();
    for (let n = 0; n < count; n++) {
      for (const [topic, members] of topics) {
        const rts = plan.stamp === 'cycle' ? cycleStart : new Date();
        const json = JSON.stringify(baselineMessage(plan.frameBytes, topic, ++seq, rts));
        for (const client of members) if (client.readyState === WebSocket.OPEN) client.send(json);
      }
    }
  }, plan.cycleMs);
}

const { port } = server.address() as AddressInfo;
serveIpc({
  ready: () => ({ url: `ws://127.0.0.1:${port}/` }),
  welcome: (payload) => {
    welcomeBytes = (payload as { bytes: number }).bytes;
  },
  start: (payload) => start(payload as BroadcastPlan),
  usage: () => sampleUsage(),
  memory: () => memoryAfterGc(),
});
process.on('SIGTERM', () => {
  clearInterval(timer);
  process.exit(0);
});
