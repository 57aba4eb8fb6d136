/**
 * @module bench/children/ws-baseline
 * The status-quo alternative to the relay's fan-out: an idiomatic `ws` broadcast server. Clients
 * pick their topics in the URL (`?topics=3,4`); every cycle each topic's message is stringified once and
 * `client.send(json)` is called for each of its clients, one write per message, as most `ws`
 * broadcast code does.
 */
import { WebSocket } from 'ws';
import { serveWsBroadcast } from '../lib/baselines/ws-broadcast-server.ts';

await serveWsBroadcast<WebSocket>({
  member: (ws) => ws,
  sendAll: (members, json) => {
    for (const client of members) if (client.readyState === WebSocket.OPEN) client.send(json);
  },
});
