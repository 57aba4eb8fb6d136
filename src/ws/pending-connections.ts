/**
 * @module ws/pending-connections
 * TCP connections that have not finished their first request (an upgrade in progress, or any HTTP
 * request) are capped and timed (relay/admission/edge.ts, relay/admission/pending-set.ts), and every refusal
 * is answered in HTTP, never a bare reset:
 *
 * - over its address's pending share, a connection is let in but its first request is answered
 *   429 with `Retry-After` (an upgrade too), so a dashboard behind one address sees a status it can
 *   retry on; one that sends nothing is answered and closed after a short wait;
 * - when the relay-wide set is full, the connection that has sent the least (the oldest idle one)
 *   is answered 503 with `Retry-After` and closed, so the newcomer gets in;
 * - one that has not sent its first request's headers within the deadline (shorter as the set fills)
 *   is answered 408 and closed.
 *
 * A closed refusal lingers a moment, reading and dropping what the client still sends, because a
 * socket closed with unread data sends a reset that makes the client's kernel drop the answer.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { clientAddress } from '../relay/admission/client-address.ts';
import type { EdgeAdmission } from '../relay/admission/edge.ts';
import type { PendingEntry } from '../relay/admission/pending-set.ts';
import type { RefusalReason } from '../relay/events.ts';

/** How long a connection refused for its address's share may take to send the request we answer. */
const REFUSED_WAIT_MS = 2_000;
/** How long an answered refusal stays open, dropping what the client sends, before it is destroyed. */
const LINGER_MS = 1_000;

/** What a connection's first request is answered instead of being served. */
export interface EarlyRefusal {
  status: 429 | 503;
  error: string;
  message: string;
}

export interface PendingGuard {
  /** The refusal this socket's first request gets (its address was over its pending share), if any. */
  refusalOf(socket: Socket): EarlyRefusal | undefined;
  /** Removes the guard from its server. */
  detach(): void;
}

const overShare: EarlyRefusal = {
  status: 429,
  error: 'too_many_requests',
  message: 'too many connections from this address are still sending a request; retry later',
};

interface PendingSocket extends PendingEntry {
  readonly socket: Socket;
}

/** Applies the caps on `server`; `onRefused` is told of every refusal (for metrics and logs). */
export function guardPendingConnections(
  server: Server,
  admission: EdgeAdmission,
  headersTimeoutMs: number,
  onRefused: (reason: RefusalReason, address: string) => void,
): PendingGuard {
  // Node's own timer for headers that started arriving (every request, also later keep-alive ones).
  server.headersTimeout = headersTimeoutMs;
  const settlers = new WeakMap<Socket, () => void>();
  const refusals = new WeakMap<Socket, EarlyRefusal>();
  /** Connections waiting for their refusal to be answered, bounded like the pending set. */
  let refusedWaiting = 0;
  const maxRefusedWaiting = admission.pendingCapacity;

  const shed = (entry: PendingEntry) => {
    const { socket } = entry as PendingSocket;
    settlers.get(socket)?.();
    onRefused('pending_shed', entry.group);
    answerAndClose(socket, 503, 'the relay is busy with other connections; retry later');
  };

  const onConnection = (socket: Socket) => {
    // The TCP peer: X-Forwarded-For is not known yet (and per-peer caps are off behind proxies).
    const peer = clientAddress(socket.remoteAddress, undefined, 0);
    const entry: PendingSocket = {
      socket,
      group: admission.group(peer),
      openedAt: performance.now(),
      bytesRead: () => socket.bytesRead,
    };
    const verdict = admission.openPending(entry);
    for (const victim of verdict.shed) shed(victim);
    if (!verdict.admitted) {
      onRefused('pending_address', entry.group);
      if (refusedWaiting >= maxRefusedWaiting) {
        // Even the refusals are full: the one case left for a bare close.
        socket.destroy();
        return;
      }
      refusedWaiting += 1;
      refusals.set(socket, overShare);
      const timer = setTimeout(
        () => answerAndClose(socket, overShare.status, overShare.message),
        REFUSED_WAIT_MS,
      );
      timer.unref();
      socket.once('close', () => {
        refusedWaiting -= 1;
        clearTimeout(timer);
      });
      return;
    }
    const timer = setTimeout(() => {
      settle();
      answerAndClose(socket, 408, 'no request arrived in time');
    }, admission.pendingDeadlineMs());
    timer.unref();
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      admission.settlePending(entry);
    };
    settlers.set(socket, settle);
    socket.once('close', settle);
  };

  // Fastify's handler (and any other) runs only for requests that are not refused.
  const handlers = server.listeners('request') as ((
    request: IncomingMessage,
    response: ServerResponse,
  ) => void)[];
  const onRequest = (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket as Socket;
    settlers.get(socket)?.();
    // Sent after its connection was answered and ended (shed, timed out): nothing more is served.
    if (socket.writableEnded) {
      request.resume();
      return;
    }
    const refusal = refusals.get(socket);
    if (refusal !== undefined) {
      refusals.delete(socket);
      const body = JSON.stringify({ error: refusal.error, message: refusal.message });
      response.writeHead(refusal.status, {
        'content-type': 'application/json',
        'retry-after': '1',
        connection: 'close',
      });
      response.end(body);
      return;
    }
    for (const handler of handlers) handler.call(server, request, response);
  };
  const onUpgrade = (request: IncomingMessage) => settlers.get(request.socket as Socket)?.();
  server.removeAllListeners('request');
  server.on('connection', onConnection);
  server.on('request', onRequest);
  server.on('upgrade', onUpgrade);
  return {
    refusalOf: (socket) => {
      const refusal = refusals.get(socket);
      if (refusal !== undefined) refusals.delete(socket);
      return refusal;
    },
    detach: () => {
      server.off('connection', onConnection);
      server.off('request', onRequest);
      server.off('upgrade', onUpgrade);
      for (const handler of handlers) server.on('request', handler);
    },
  };
}

/**
 * Answers a connection that has no request being served with a plain HTTP error and hangs up after
 * the linger. Nothing is written to a socket that is already gone or answered.
 */
export function answerAndClose(
  socket: Socket,
  status: number,
  message: string,
  error = status === 408 ? 'request_timeout' : status === 429 ? 'too_many_requests' : 'unavailable',
): void {
  if (socket.destroyed || socket.writableEnded) return;
  const body = JSON.stringify({ error, message });
  socket.on('error', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
