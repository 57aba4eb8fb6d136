/**
 * @module drain
 * A relay's drain (docs/operations.md "Shutdown"), started by SIGTERM or `POST /drain`: no new
 * connection is taken, every connection is told `going_away` with a delay of its own and closed with
 * 1001 at that time, the delays spread evenly over the first 85 % of `drainMs` (util/spread-delays.ts). The clients
 * that ignore the hint and reconnect at once on close therefore reach the other relays at an even
 * rate, never all in the same second; closes the event loop held up are caught up at a bounded
 * rate, not all at once. Resolves once every connection has gone, or a grace after the window for
 * those that never answered the close (the app's close then drops them).
 */
import { closeCodes } from '../packages/protocol/src/protocol/messages.ts';
import type { SseEndpoint } from './sse/endpoint.ts';
import { spreadDelays, type Uniform } from './util/spread-delays.ts';
import type { WsEndpoint } from './ws/endpoint.ts';

/** One connection of either transport, as the drain sees it. */
export interface LeavingConnection {
  goingAway(reconnectInMs: number): void;
  /** Closes it (1001 on a WebSocket, the end of the response on SSE). */
  leave(): void;
  /** Drops it without waiting for the client (past the grace). */
  drop(): void;
  onceClosed(listener: () => void): void;
}

/** Every connection of both transports, as the drain sees it. */
export function leavingConnections(ws: WsEndpoint, sse: SseEndpoint): LeavingConnection[] {
  return [
    ...[...ws.connections].map(
      (connection): LeavingConnection => ({
        goingAway: (ms) => connection.goingAway(ms),
        leave: () => connection.close(closeCodes.goingAway, 'relay shutting down'),
        drop: () => connection.terminate(),
        onceClosed: (listener) => connection.onceClosed(listener),
      }),
    ),
    ...[...sse.connections].map(
      (connection): LeavingConnection => ({
        goingAway: (ms) => connection.goingAway(ms),
        leave: () => connection.close('relay shutting down'),
        drop: () => connection.closeSlowConsumer(),
        onceClosed: (listener) => connection.onceClosed(listener),
      }),
    ),
  ];
}

export interface DrainPlan {
  drainMs: number;
  /** Turns newcomers away (503) on every transport. */
  stopAccepting(): void;
  /** The connections open now, once newcomers are turned away. */
  connections(): LeavingConnection[];
  random?: Uniform;
}

/**
 * Past the window, closes the event loop held up are still paced this long (at the catch-up rate),
 * and a connection that has not finished its close handshake is waited for; then what is left is
 * dropped, so that releasing everything fits in the program's 5 s after the window.
 */
const CLOSE_GRACE_MS = 1_500;
/**
 * The moments fill this share of the window; the rest of it is room for a relay the machine holds
 * up to catch up (at the rate below) before anything is dropped.
 */
const PLANNED_SHARE = 0.85;
/** How often the closer looks for connections whose moment has come. */
const TICK_MS = 10;
/**
 * Closes that fell behind (the event loop was held up) are caught up at most this much faster than
 * the plan's own rate, and no more than a tenth of a second's worth at once: a stalled second must
 * not become a burst of reconnects at the other relays.
 */
const CATCH_UP_RATE = 1.5;
const BURST_MS = 100;

/** Drains; resolves with the number of connections told to go once they have gone (or the grace is over). */
export async function drainConnections(plan: DrainPlan): Promise<number> {
  plan.stopAccepting();
  const leaving = plan.connections();
  const delays = spreadDelays(leaving.length, plan.drainMs * PLANNED_SHARE, plan.random);
  const open = new Set(leaving);
  const gone = leaving.map((connection, index) => {
    connection.goingAway(delays[index]!);
    return new Promise<void>((resolve) =>
      connection.onceClosed(() => {
        open.delete(connection);
        resolve();
      }),
    );
  });
  const byMoment = leaving
    .map((connection, index) => ({ connection, delayMs: delays[index]! }))
    .sort((a, b) => a.delayMs - b.delayMs);
  const closer = paceCloses(byMoment, plan.drainMs);
  let grace: NodeJS.Timeout | undefined;
  const graceOver = new Promise<void>((resolve) => {
    grace = setTimeout(resolve, plan.drainMs + CLOSE_GRACE_MS);
  });
  await Promise.race([Promise.all(gone), graceOver]);
  clearTimeout(grace);
  clearTimeout(closer.timer);
  for (const connection of open) connection.drop();
  return leaving.length;
}

/** Closes each connection at its moment, sorted by moment, at most at the catch-up rate. */
function paceCloses(
  byMoment: readonly { connection: LeavingConnection; delayMs: number }[],
  drainMs: number,
): { timer: NodeJS.Timeout | undefined } {
  const state: { timer: NodeJS.Timeout | undefined } = { timer: undefined };
  if (drainMs === 0) {
    for (const { connection } of byMoment) connection.leave();
    return state;
  }
  const startedAt = Date.now();
  const perMs = (byMoment.length / (drainMs * PLANNED_SHARE)) * CATCH_UP_RATE;
  const burst = Math.max(1, perMs * BURST_MS);
  let next = 0;
  let allowance = 1;
  let lastAt = startedAt;
  const tick = (): void => {
    const now = Date.now();
    allowance = Math.min(burst, allowance + (now - lastAt) * perMs);
    lastAt = now;
    while (next < byMoment.length && byMoment[next]!.delayMs <= now - startedAt && allowance >= 1) {
      byMoment[next]!.connection.leave();
      next += 1;
      allowance -= 1;
    }
    if (next < byMoment.length) state.timer = setTimeout(tick, TICK_MS);
  };
  tick();
  return state;
}
