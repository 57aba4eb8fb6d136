/**
 * @module test/upstream/scripted-server
 * A node:http server on 127.0.0.1:0 whose answers a test scripts request by request; it records
 * every request and the most requests it ever had open at once.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  body: string;
  headers: IncomingMessage['headers'];
}

/** Answers one request; may leave `res` open (a hung upstream). `index` is 0-based. */
export type Handler = (req: RecordedRequest, res: ServerResponse, index: number) => void;

export interface ScriptedServer {
  url: string;
  requests: RecordedRequest[];
  readonly open: number;
  readonly maxOpen: number;
  close(): Promise<void>;
}

export async function startScriptedServer(handler: Handler): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  let open = 0;
  let maxOpen = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    res.on('close', () => open--);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        body: Buffer.concat(chunks).toString(),
        headers: req.headers,
      };
      requests.push(recorded);
      handler(recorded, res, requests.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get open() {
      return open;
    },
    get maxOpen() {
      return maxOpen;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

/** Polls `condition` until it holds; fails after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
