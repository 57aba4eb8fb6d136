/**
 * @module bench/lib/baselines/ws-broadcast-server
 * A plain `ws` broadcast server for the baselines: clients pick their topics in the URL
 * (`?topics=3,4`); each topic's message, paced by the wall clock (baseline-frame.ts's Pacer), is
 * stringified once and handed to `sendAll` with the topic's members. The children differ only in how they send it (bench/children/ws-baseline.ts,
 * floor-baseline.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { serveIpc } from '../ipc.ts';
import { memoryAfterGc, sampleUsage } from '../usage.ts';
import { type BroadcastPlan, baselineMessage, Pacer, topicsOf } from './baseline-frame.ts';

export interface BroadcastSender<Member> {
  /** What the server keeps of each client, once per connection. */
  member(ws: WebSocket, request: IncomingMessage): Member;
  /** Sends one message, `json`, to every member of its topic. */
  sendAll(members: ReadonlySet<Member>, json: string): void;
}

export async function serveWsBroadcast<Member>(sender: BroadcastSender<Member>): Promise<void> {
  const topics = new Map<number, Set<Member>>();
  /** Sent to each client on connect (scenario 3: the relay's snapshot). */
  let welcomeBytes = 0;

  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));

  server.on('connection', (ws: WebSocket, request: IncomingMessage) => {
    const joined = topicsOf(new URL(request.url ?? '/', 'http://x').searchParams.get('topics'));
    const member = sender.member(ws, request);
    const memberships: Set<Member>[] = [];
    for (const topic of joined) {
      let members = topics.get(topic);
      if (members === undefined) {
        members = new Set();
        topics.set(topic, members);
      }
      members.add(member);
      memberships.push(members);
      if (welcomeBytes > 0) ws.send(JSON.stringify(baselineMessage(welcomeBytes, topic, 0)));
    }
    ws.on('close', () => {
      for (const members of memberships) members.delete(member);
    });
    ws.on('error', () => ws.terminate());
  });

  let pacer: Pacer | undefined;
  const start = (plan: BroadcastPlan): void => {
    pacer = new Pacer(plan, topics, (topic, seq, rts) => {
      const members = topics.get(topic);
      if (members !== undefined)
        sender.sendAll(members, JSON.stringify(baselineMessage(plan.frameBytes, topic, seq, rts)));
    });
  };

  const { port } = server.address() as AddressInfo;
  serveIpc({
    ready: () => ({ url: `ws://127.0.0.1:${port}/` }),
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
}
