/**
 * @module bench/lib/subscribe-probe
 * Asks a relay once, on a connection of its own, how it answers one `subscribe`: before a scenario
 * connects its clients with a per-subscription option, so that an option this relay does not know
 * is reported as such instead of measured as if it applied.
 */
import { once } from 'node:events';
import WebSocket from 'ws';

export type SubscribeAnswer =
  | { type: 'subscribed'; echo: Record<string, unknown> }
  | { type: 'error'; code: string; message: string };

const PROBE_ID = 'probe';

export async function probeSubscribe(
  url: string,
  request: Record<string, unknown>,
  timeoutMs = 15_000,
): Promise<SubscribeAnswer> {
  const ws = new WebSocket(url);
  const timer = setTimeout(() => ws.terminate(), timeoutMs);
  try {
    await once(ws, 'open');
    const answer = new Promise<SubscribeAnswer>((resolve, reject) => {
      ws.on('message', (data: Buffer) => {
        const message = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
        if (message.id !== PROBE_ID) return;
        if (message.type === 'subscribed') resolve({ type: 'subscribed', echo: message });
        else if (message.type === 'error')
          resolve({ type: 'error', code: String(message.code), message: String(message.message) });
      });
      ws.once('close', () => reject(new Error(`no answer to the probe subscribe within ${timeoutMs} ms`)));
    });
    ws.send(JSON.stringify({ ...request, op: 'subscribe', id: PROBE_ID }));
    return await answer;
  } finally {
    clearTimeout(timer);
    ws.terminate();
  }
}
