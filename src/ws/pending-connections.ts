/**
 * @module ws/pending-connections
 * TCP connections that have not finished their first request (an upgrade in progress, or any HTTP
 * request) are capped and timed (relay/admission/edge.ts): one over the cap is destroyed at once, and one
 * that has not sent its first request's headers within `headersTimeoutMs` is destroyed then. So
 * thousands of sockets that connect and never finish an upgrade cost a bounded number of slots.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import { clientAddress } from '../relay/admission/client-address.ts';
import type { EdgeAdmission } from '../relay/admission/edge.ts';

/** Applies the caps on `server`; returns the function that removes them. */
export function guardPendingConnections(
  server: Server,
  admission: EdgeAdmission,
  headersTimeoutMs: number,
): () => void {
  // Node's own timer for headers that started arriving (every request, also later keep-alive ones).
  server.headersTimeout = headersTimeoutMs;
  const settlers = new WeakMap<Socket, () => void>();
  const onConnection = (socket: Socket) => {
    // The TCP peer: X-Forwarded-For is not known yet (and per-peer caps are off behind proxies).
    const peer = clientAddress(socket.remoteAddress, undefined, 0);
    if (!admission.openPending(peer)) {
      socket.destroy();
      return;
    }
    const timer = setTimeout(() => socket.destroy(), headersTimeoutMs);
    timer.unref();
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      admission.settlePending(peer);
    };
    settlers.set(socket, settle);
    socket.once('close', settle);
  };
  const onFirstRequest = (request: IncomingMessage) => settlers.get(request.socket as Socket)?.();
  server.on('connection', onConnection);
  server.on('request', onFirstRequest);
  server.on('upgrade', onFirstRequest);
  return () => {
    server.off('connection', onConnection);
    server.off('request', onFirstRequest);
    server.off('upgrade', onFirstRequest);
  };
}
