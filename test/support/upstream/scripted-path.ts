/**
 * @module test/support/upstream/scripted-path
 * A fake upstream: the simulator for every request but one public GET path, whose body the test
 * sets (any text, pathological ones included), so a relay's `rest` stream of that path can be
 * driven body by body while everything else it asks (health, catalogue) is answered as usual.
 */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedPath {
  /** The fake upstream's base URL, for the relay's `upstream`. */
  readonly url: string;
  /** How many times the scripted path was asked. */
  readonly asked: number;
  /** The body the path serves from now on (JSON text). */
  serve(body: string): void;
  close(): Promise<void>;
}

/** A server in front of the simulator: `answer` serves what the test scripts, anything else is forwarded. */
export interface SimFront {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Starts a fake upstream on port 0 that lets `answer` take each request first (true: answered) and
 * forwards the rest to the simulator at `simUrl` as they came.
 */
export async function startSimFront(
  simUrl: string,
  answer: (req: IncomingMessage, res: ServerResponse) => boolean,
): Promise<SimFront> {
  const sim = new URL(simUrl);
  const server: Server = createServer((req, res) => {
    if (answer(req, res)) return;
    const forwarded = request(
      { host: sim.hostname, port: sim.port, method: req.method, path: req.url, headers: req.headers },
      (upstream) => {
        res.writeHead(upstream.statusCode ?? 502, upstream.headers);
        upstream.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function startScriptedPath(simUrl: string, path: string, first: string): Promise<ScriptedPath> {
  let body = first;
  let asked = 0;
  const front = await startSimFront(simUrl, (req, res) => {
    if (req.method !== 'GET' || req.url !== path) return false;
    asked += 1;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
    return true;
  });
  return {
    url: front.url,
    get asked() {
      return asked;
    },
    serve(next) {
      body = next;
    },
    close: () => front.close(),
  };
}
