/**
 * @module http/drain-route
 * `POST /drain` (docs/operations.md "Shutdown"): starts the relay's drain, as SIGTERM does, and
 * answers 202 at once; the process exits 0 when the drain is over. An operator endpoint: behind the
 * operator key when one is set, on the operator port when there is one; with neither, only a client
 * on the relay's own machine (a loopback peer) may drain it, so that nobody on the public port can
 * take a relay out of service.
 */
import { isIP } from 'node:net';
import type { FastifyInstance } from 'fastify';

export interface DrainControl {
  /** Starts the drain (again: nothing new) and says over how long its connections leave. */
  start(): { drainMs: number; connections: number };
  /** Whether operator access is already checked (an operator key, or the operator port). */
  guarded: boolean;
}

export function registerDrainRoute(scope: FastifyInstance, control: DrainControl): void {
  scope.post('/drain', async (request, reply) => {
    if (!control.guarded && !isLoopback(request.raw.socket.remoteAddress)) {
      return reply.code(403).send({
        error: 'forbidden',
        message:
          'POST /drain needs operator access: set --operator-key or --operator-port, or send it from the relay’s own machine',
      });
    }
    const { drainMs, connections } = control.start();
    return reply.code(202).send({ status: 'draining', drain_ms: drainMs, connections });
  });
}

/** Whether the TCP peer is this machine (127.0.0.0/8, ::1, or IPv4 loopback mapped into IPv6). */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  if (isIP(v4) === 4) return v4.startsWith('127.');
  return address === '::1';
}
