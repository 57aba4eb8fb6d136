/**
 * @module drain
 * A relay's drain (docs/operations.md "Shutdown"), started by SIGTERM or `POST /drain`: no new
 * connection is taken, every connection is told `going_away` with a delay of its own and closed with
 * 1001 at that time, the delays spread evenly over `drainMs` (util/spread-delays.ts). The clients
 * that ignore the hint and reconnect at once on close therefore reach the other relays at an even
 * rate, never all in the same second. Resolves once every connection has gone, or a grace after
 * the window for those that never answered the close (the app's close then drops them).
 */
import { spreadDelays, type Uniform } from './util/spread-delays.ts';

/** One connection of either transport, as the drain sees it. */
export interface LeavingConnection {
  goingAway(reconnectInMs: number): void;
  /** Closes it (1001 on a WebSocket, the end of the response on SSE). */
  leave(): void;
  onceClosed(listener: () => void): void;
}

export interface DrainPlan {
  drainMs: number;
  /** Turns newcomers away (503) on every transport. */
  stopAccepting(): void;
  /** The connections open now, once newcomers are turned away. */
  connections(): LeavingConnection[];
  random?: Uniform;
}

/** Past the window, a connection that has not finished its close handshake is no longer waited for. */
const CLOSE_GRACE_MS = 1_000;

/** Drains; resolves with the number of connections told to go once they have gone (or the grace is over). */
export async function drainConnections(plan: DrainPlan): Promise<number> {
  plan.stopAccepting();
  const leaving = plan.connections();
  const delays = spreadDelays(leaving.length, plan.drainMs, plan.random);
  const timers: NodeJS.Timeout[] = [];
  const gone = leaving.map((connection, index) => {
    const delayMs = delays[index]!;
    connection.goingAway(delayMs);
    timers.push(setTimeout(() => connection.leave(), delayMs));
    return new Promise<void>((resolve) => connection.onceClosed(resolve));
  });
  let grace: NodeJS.Timeout | undefined;
  const graceOver = new Promise<void>((resolve) => {
    grace = setTimeout(resolve, plan.drainMs + CLOSE_GRACE_MS);
  });
  await Promise.race([Promise.all(gone), graceOver]);
  clearTimeout(grace);
  for (const timer of timers) clearTimeout(timer);
  return leaving.length;
}
