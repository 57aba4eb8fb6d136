/**
 * @module test/support/scripted-path
 * A fake upstream: the simulator for every request but one public GET path, whose body the test
 * sets (any text, pathological ones included), so a relay's `rest` stream of that path can be
 * driven body by body while everything else it asks (health, catalogue) is answered as usual.
 */
import { createServer, request, type Server } from 'node:http';
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

export async function startScriptedPath(simUrl: string, path: string, first: string): Promise<ScriptedPath> {
  let body = first;
  let asked = 0;
  const sim = new URL(simUrl);
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === path) {
      asked += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
      return;
    }
    const forwarded = request(
      { host: sim.hostname, port: sim.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get asked() {
      return asked;
    },
    serve(next) {
      body = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
