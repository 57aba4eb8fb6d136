/**
 * @module bench/lib/ipc
 * Request/reply over the child_process IPC channel: the orchestrator asks a child (a server under
 * test, the simulator or the load generator) to do one thing and waits for its answer, so that
 * measurement windows start and end on the orchestrator's word.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

interface IpcRequest {
  id: number;
  command: string;
  payload: unknown;
}

interface IpcReply {
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
}

export type Handler = (payload: unknown) => unknown;

/** In a child: answers each request with its handler's (awaited) result; exits when the parent goes. */
export function serveIpc(handlers: Record<string, Handler>): void {
  process.on('message', (raw: unknown) => {
    const request = raw as IpcRequest;
    void (async () => {
      const reply: IpcReply = { id: request.id, ok: true };
      try {
        const handler = handlers[request.command];
        if (handler === undefined) throw new Error(`unknown command ${request.command}`);
        reply.result = await handler(request.payload);
      } catch (error) {
        reply.ok = false;
        reply.error = error instanceof Error ? (error.stack ?? error.message) : String(error);
      }
      process.send?.(reply);
    })();
  });
  // An orphaned child must not keep running (the parent was killed, or Ctrl-C reached it first).
  process.on('disconnect', () => process.exit(0));
}

export interface Child {
  readonly name: string;
  readonly pid: number | undefined;
  request<T>(command: string, payload?: unknown, timeoutMs?: number): Promise<T>;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();

/** Kills every child still running (on exit, Ctrl-C, or an error in the orchestrator). */
export function killAllChildren(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

export interface ForkOptions {
  /** Flags for the child's node, besides `--import tsx` (e.g. --expose-gc, --cpu-prof). */
  nodeFlags?: string[];
  env?: Record<string, string>;
}

/** Forks a bench/children script under tsx and waits for its `ready` reply. */
export async function forkChild(script: string, options: ForkOptions = {}): Promise<Child> {
  const path = fileURLToPath(new URL(`../children/${script}.ts`, import.meta.url));
  const child = fork(path, [], {
    execArgv: ['--import', 'tsx', ...(options.nodeFlags ?? [])],
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  running.add(child);
  let nextId = 1;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let exited = false;
  child.on('message', (raw: unknown) => {
    const reply = raw as IpcReply;
    const waiter = pending.get(reply.id);
    if (waiter === undefined) return;
    pending.delete(reply.id);
    if (reply.ok) waiter.resolve(reply.result);
    else waiter.reject(new Error(`${script}: ${reply.error}`));
  });
  child.on('exit', (code, signal) => {
    exited = true;
    running.delete(child);
    for (const waiter of pending.values())
      waiter.reject(new Error(`${script} exited (code ${code}, signal ${signal})`));
    pending.clear();
  });

  const request = <T>(command: string, payload?: unknown, timeoutMs = 120_000): Promise<T> => {
    if (exited) return Promise.reject(new Error(`${script} is not running`));
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`${script}: ${command} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, {
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value as T);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      child.send({ id, command, payload } satisfies IpcRequest);
    });
  };

  const handle: Child = {
    name: script,
    pid: child.pid,
    request,
    stop: async () => {
      if (exited) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      // SIGTERM first so a --cpu-prof child can write its profile; SIGKILL if it lingers.
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await gone;
      clearTimeout(timer);
    },
  };
  await request('ready', undefined, 60_000);
  return handle;
}
