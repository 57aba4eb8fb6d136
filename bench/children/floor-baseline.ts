/**
 * @module bench/children/floor-baseline
 * The floor of any Node server that writes each message to each client on its own: the same `ws`
 * server and topics as the idiomatic baseline, but each message is framed once (relay/streams/frame.ts's
 * encoder) and the same bytes are written to every member's socket, one `socket.write` per
 * delivery, with nothing else per client. No polling, no protocol, no bookkeeping: what is left is
 * the socket write itself (on loopback the kernel's TCP send and receive path), which the relay,
 * `ws` and socket.io all pay once per delivery when a client gets one message per write.
 */
import type { Socket } from 'node:net';
import { WebSocket } from 'ws';
import { encodeTextFrame } from '../../src/relay/streams/frame.ts';
import { serveWsBroadcast } from '../lib/baselines/ws-broadcast-server.ts';

interface Member {
  ws: WebSocket;
  socket: Socket;
}

await serveWsBroadcast<Member>({
  // The upgrade request's socket is the connection's socket (ws writes its frames to it too).
  member: (ws, request) => ({ ws, socket: request.socket as Socket }),
  sendAll: (members, json) => {
    const { wire } = encodeTextFrame(json);
    for (const { ws, socket } of members) if (ws.readyState === WebSocket.OPEN) socket.write(wire);
  },
});
