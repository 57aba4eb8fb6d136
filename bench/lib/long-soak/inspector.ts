/**
 * @module bench/lib/long-soak/inspector
 * Memory after a forced full GC, taken from outside a relay through the V8 inspector of its process
 * (`node --inspect=127.0.0.1:0`, loopback only, started so by the soak alone): the relay itself
 * carries no GC trigger, no debug route and no flag for it. `HeapProfiler.collectGarbage` is a full
 * collection; `Runtime.evaluate` then reads `process.memoryUsage()` and the active resources.
 */
import { once } from 'node:events';
import WebSocket from 'ws';

interface InspectorReply {
  id?: number;
  result?: { result?: { value?: unknown }; exceptionDetails?: unknown };
  error?: { message: string };
}

export interface ProcessInsides {
  rss: number;
  heapUsed: number;
  external: number;
  /** Active libuv handles and requests, timers not counted (`process.getActiveResourcesInfo()`). */
  handles: number;
  /** Active timers (`Timeout` resources). */
  timers: number;
}

/** What `Runtime.evaluate` runs in the relay: only reads. */
const READ_INSIDES = `(() => {
  const memory = process.memoryUsage();
  const resources = process.getActiveResourcesInfo();
  const timers = resources.filter((kind) => kind === 'Timeout').length;
  return { rss: memory.rss, heapUsed: memory.heapUsed, external: memory.external,
    handles: resources.length - timers, timers };
})()`;

export class InspectorSession {
  readonly #ws: WebSocket;
  readonly #pending = new Map<number, (reply: InspectorReply) => void>();
  #nextId = 1;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on('message', (data) => {
      const reply = JSON.parse(data.toString()) as InspectorReply;
      if (reply.id === undefined) return;
      this.#pending.get(reply.id)?.(reply);
      this.#pending.delete(reply.id);
    });
    ws.on('close', () => {
      for (const resolve of this.#pending.values()) resolve({ error: { message: 'inspector closed' } });
      this.#pending.clear();
    });
  }

  /** `url`: the `ws://127.0.0.1:PORT/UUID` the process printed (`Debugger listening on ...`). */
  static async connect(url: string): Promise<InspectorSession> {
    const ws = new WebSocket(url);
    ws.on('error', () => {});
    await once(ws, 'open');
    return new InspectorSession(ws);
  }

  async #send(
    method: string,
    params: Record<string, unknown> = {},
    timeoutMs = 30_000,
  ): Promise<InspectorReply> {
    if (this.#ws.readyState !== WebSocket.OPEN) throw new Error('inspector not connected');
    const id = this.#nextId++;
    const reply = await new Promise<InspectorReply>((resolve) => {
      const timer = setTimeout(() => resolve({ error: { message: `${method} timed out` } }), timeoutMs);
      this.#pending.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
      this.#ws.send(JSON.stringify({ id, method, params }));
    });
    if (reply.error !== undefined) throw new Error(`${method}: ${reply.error.message}`);
    return reply;
  }

  /** A full garbage collection in the process, then what its memory and resources are. */
  async insidesAfterGc(): Promise<ProcessInsides> {
    await this.#send('HeapProfiler.collectGarbage');
    const reply = await this.#send('Runtime.evaluate', { expression: READ_INSIDES, returnByValue: true });
    if (reply.result?.exceptionDetails !== undefined) throw new Error('Runtime.evaluate threw');
    return reply.result?.result?.value as ProcessInsides;
  }

  close(): void {
    this.#ws.close();
  }
}
