/**
 * @module bench/lib/baselines/uws
 * The uWebSockets.js anchor's native binary, if installed, and the part of its API the bench uses.
 * It lives in bench/uws/, a package of its own (`npm run bench:uws`), not among the relay's
 * dependencies: a devDependency would put `bufferutil` and `utf-8-validate` (the package's optional
 * dependencies) at the top of the lock file, where the relay's `ws` takes them as its optional
 * peers, so the relay's production install (`npm ci --omit=dev`, the Docker image) would get them
 * too. Where it is missing the fan-out scenarios leave its row out and say why. The binary is loaded
 * directly rather than through the package's entry, which on a Node with no fitting binary falls
 * back to a JavaScript implementation over `ws`: that would be a second `ws` row, not uWS.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const UWS_PACKAGE = '@trufflesuite/uws-js-unofficial';

/** The binary's path for this Node, or why the uWS anchor cannot run here. */
export function uwsBinary(): { path: string } | { missing: string } {
  let root: string;
  try {
    const require = createRequire(new URL('../../uws/package.json', import.meta.url));
    root = dirname(require.resolve(`${UWS_PACKAGE}/package.json`));
  } catch {
    return { missing: 'uWS not installed: npm run bench:uws' };
  }
  const binary = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  const path = join(root, 'binaries', binary);
  return existsSync(path)
    ? { path }
    : { missing: `uWS has no binary for node ${process.version} here (${binary} is not in ${UWS_PACKAGE})` };
}

/** The native module at `path` (from uwsBinary). */
export function loadUws(path: string): Uws {
  return createRequire(import.meta.url)(path) as Uws;
}

/**
 * What the bench uses of uWebSockets.js v20.30 (the package's docs/index.d.ts), declared here so
 * that typecheck and lint need no package that may be missing.
 */
interface Uws {
  App(): UwsApp;
  /** CompressOptions: no permessage-deflate. */
  DISABLED: number;
  us_socket_local_port(socket: UwsListenSocket): number;
  us_listen_socket_close(socket: UwsListenSocket): void;
}

/** Opaque: a uSockets listen socket. */
type UwsListenSocket = object;

interface UwsApp {
  ws<UserData>(pattern: string, behavior: UwsBehavior<UserData>): UwsApp;
  listen(host: string, port: number, done: (socket: UwsListenSocket | false) => void): UwsApp;
  publish(topic: string, message: string, isBinary?: boolean, compress?: boolean): boolean;
}

interface UwsBehavior<UserData> {
  compression?: number;
  maxPayloadLength?: number;
  maxBackpressure?: number;
  idleTimeout?: number;
  sendPingsAutomatically?: boolean;
  upgrade?: (res: UwsResponse, req: UwsRequest, context: unknown) => void;
  open?: (ws: UwsSocket<UserData>) => void;
}

interface UwsResponse {
  upgrade<UserData>(
    userData: UserData,
    key: string,
    protocol: string,
    extensions: string,
    context: unknown,
  ): void;
}

interface UwsRequest {
  getQuery(): string;
  getHeader(lowerCaseKey: string): string;
}

interface UwsSocket<UserData> {
  getUserData(): UserData;
  subscribe(topic: string): boolean;
  send(message: string): number;
}
