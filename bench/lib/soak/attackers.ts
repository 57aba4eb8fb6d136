/**
 * @module bench/lib/soak/attackers
 * The hostile and the merely bad clients of `npm run soak`, each started against a relay URL and
 * stopped with a report of what it did and how its connections ended (close codes as the client
 * saw them). A flooder whose connection is closed reconnects at once, as a persistent attacker would.
 */
import { connect, type Socket } from 'node:net';
import WebSocket from 'ws';

export interface AttackReport {
  /** Connections opened (flooders reconnect after each close). */
  connections: number;
  framesSent: number;
  repliesReceived: number;
  /** Close code as the client saw it -> how many connections ended with it. */
  closeCodes: Record<string, number>;
}

export interface Attack {
  stop(): Promise<AttackReport>;
}

function emptyReport(): AttackReport {
  return { connections: 0, framesSent: 0, repliesReceived: 0, closeCodes: {} };
}

/** The relay's WebSocket URL; the query of `url` (`?token=` with the soak's key) is kept. */
export function wsUrl(url: string): string {
  const { origin, search } = new URL(url);
  return `${origin.replace(/^http/, 'ws')}/v1/ws${search}`;
}

/**
 * A loopback address of its own for client `index` (127.0.0.0/8 all reaches the relay on Linux),
 * for loads that model many clients rather than one host: the per-address limits apply to each.
 */
function ownAddress(block: number, index: number): WebSocket.ClientOptions {
  return { localAddress: `127.${block}.${Math.floor(index / 250)}.${(index % 250) + 1}` };
}

/** A refused upgrade (HTTP 429 and the like) counts as `http<status>`, not as a close. */
function countRefusal(ws: WebSocket, report: AttackReport): void {
  ws.on('unexpected-response', (request, response) => {
    countClose(report, `http${response.statusCode}`);
    ws.removeAllListeners('close');
    request.destroy();
  });
}

function countClose(report: AttackReport, code: number | string): void {
  report.closeCodes[code] = (report.closeCodes[code] ?? 0) + 1;
}

/** Connections that send small requests as fast as their socket takes them; `reading: false` never reads. */
export function flood(
  url: string,
  { connections, reading }: { connections: number; reading: boolean },
): Attack {
  const report = emptyReport();
  let running = true;
  const sockets = new Set<WebSocket>();
  const frame = JSON.stringify({ op: 'ping' });
  const open = () => {
    if (!running) return;
    report.connections += 1;
    const ws = new WebSocket(wsUrl(url));
    sockets.add(ws);
    ws.on('error', () => {});
    countRefusal(ws, report);
    ws.on('unexpected-response', () => {
      sockets.delete(ws);
      setTimeout(open, 100);
    });
    ws.on('message', () => {
      report.repliesReceived += 1;
    });
    ws.on('close', (code) => {
      sockets.delete(ws);
      countClose(report, code);
      setTimeout(open, 10);
    });
    ws.on('open', () => {
      if (!reading) ws.pause();
      const pump = () => {
        if (!running || ws.readyState !== WebSocket.OPEN) return;
        for (let burst = 0; burst < 200 && ws.bufferedAmount < 256 * 1024; burst += 1) {
          ws.send(frame);
          report.framesSent += 1;
        }
        setImmediate(pump);
      };
      pump();
    });
  };
  for (let index = 0; index < connections; index += 1) open();
  return {
    async stop() {
      running = false;
      for (const ws of sockets) ws.terminate();
      return report;
    },
  };
}

/** Connections that open, subscribe to a few markets, and close again, `parallel` at a time. */
export function churn(url: string, markets: string[], { parallel }: { parallel: number }): Attack {
  const report = emptyReport();
  let running = true;
  const cycle = (lane: number) => {
    if (!running) return;
    report.connections += 1;
    const ws = new WebSocket(wsUrl(url), ownAddress(1, lane));
    ws.on('error', () => {});
    ws.on('open', () => {
      const market = markets[(report.connections + lane) % markets.length]!;
      ws.send(JSON.stringify({ op: 'subscribe', channel: 'book', markets: [market], depth: 10 }));
      report.framesSent += 1;
    });
    ws.on('message', () => {
      report.repliesReceived += 1;
      ws.close();
    });
    ws.on('close', (code) => {
      countClose(report, code);
      setImmediate(() => cycle(lane));
    });
    countRefusal(ws, report);
    ws.on('unexpected-response', () => setTimeout(() => cycle(lane), 100));
  };
  for (let lane = 0; lane < parallel; lane += 1) cycle(lane);
  return {
    async stop() {
      running = false;
      return report;
    },
  };
}

/**
 * Clients that subscribe to every market's full book, again every 200 ms, and never read. On stop they read
 * again for a moment, so that the close code the relay decided can reach them.
 */
export function slowConsumers(url: string, markets: string[], count: number): Attack {
  const report = emptyReport();
  const clients: WebSocket[] = [];
  const timers: NodeJS.Timeout[] = [];
  for (let index = 0; index < count; index += 1) {
    report.connections += 1;
    const ws = new WebSocket(wsUrl(url), ownAddress(2, index));
    clients.push(ws);
    ws.on('error', () => {});
    ws.on('close', (code) => countClose(report, code));
    ws.on('open', () => {
      ws.pause();
      // A repeated subscribe answers with fresh snapshots: within the request rate, it fills the
      // loopback buffers (megabytes) in seconds rather than minutes.
      const resubscribe = () => {
        if (ws.readyState !== WebSocket.OPEN) return;
        ws.send(JSON.stringify({ op: 'subscribe', channel: 'book', markets }));
        report.framesSent += 1;
        timers.push(setTimeout(resubscribe, 200));
      };
      resubscribe();
    });
  }
  return {
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      for (const ws of clients) ws.resume();
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline && clients.some((ws) => ws.readyState !== WebSocket.CLOSED)) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        // Still open after the relay had its say: the client hangs up itself (counted as its code).
        if (Date.now() > deadline - 1_000) for (const ws of clients) ws.terminate();
      }
      return report;
    },
  };
}

/** Status page viewers that ask for the live feed and never read a byte of it. */
export function stalledViewers(url: string, count: number): Attack {
  const report = emptyReport();
  const { hostname, port } = new URL(url);
  const sockets: Socket[] = [];
  for (let index = 0; index < count; index += 1) {
    report.connections += 1;
    const socket = connect(Number(port), hostname, () => {
      socket.pause();
      socket.write(`GET /status/events HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`);
      report.framesSent += 1;
    });
    socket.on('error', () => {});
    sockets.push(socket);
  }
  return {
    async stop() {
      for (const socket of sockets) socket.destroy();
      return report;
    },
  };
}

/**
 * Idle sockets that connect and never send a byte, `perAddress` from each of `addresses` loopback
 * addresses, each reconnected when the relay closes it (as a persistent attacker would), to lock
 * everyone else out of the pending-connection slots. An HTTP answer the relay gives a shed socket
 * counts as `http<status>`.
 */
export function lockout(
  url: string,
  { addresses, perAddress }: { addresses: number; perAddress: number },
): Attack {
  const report = emptyReport();
  const { hostname, port } = new URL(url);
  let running = true;
  const sockets = new Set<Socket>();
  const open = (address: number) => {
    if (!running) return;
    report.connections += 1;
    const socket = connect({ port: Number(port), host: hostname, localAddress: `127.3.0.${address + 1}` });
    sockets.add(socket);
    let answered = false;
    socket.on('data', (data) => {
      if (answered) return;
      answered = true;
      countClose(report, `http${data.toString('latin1').split(' ')[1] ?? '?'}`);
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      sockets.delete(socket);
      if (!answered) countClose(report, 'closed unanswered');
      setTimeout(() => open(address), 50);
    });
  };
  for (let address = 0; address < addresses; address += 1) {
    for (let i = 0; i < perAddress; i += 1) open(address);
  }
  return {
    async stop() {
      running = false;
      for (const socket of sockets) socket.destroy();
      return report;
    },
  };
}

/** Upgrades with wrong API keys from one address, `parallel` at a time, as fast as they are answered. */
export function keyGuessing(url: string, { parallel }: { parallel: number }): Attack {
  const report = emptyReport();
  const { origin } = new URL(url);
  let running = true;
  const guess = () => {
    if (!running) return;
    report.connections += 1;
    report.framesSent += 1;
    const ws = new WebSocket(wsUrl(`${origin}/?token=guess-${report.connections}`), ownAddress(4, 0));
    ws.on('error', () => {});
    ws.on('unexpected-response', (request, response) => {
      countClose(report, `http${response.statusCode}`);
      request.destroy();
      setImmediate(guess);
    });
    ws.on('open', () => {
      countClose(report, 'opened');
      ws.close();
    });
    ws.on('close', () => setImmediate(guess));
  };
  for (let lane = 0; lane < parallel; lane += 1) guess();
  return {
    async stop() {
      running = false;
      return report;
    },
  };
}

/** Every attack by name, with the JSON-able options a parent process can send. */
export type AttackSpec =
  | { kind: 'flood'; connections: number; reading: boolean }
  | { kind: 'churn'; parallel: number; markets: string[] }
  | { kind: 'slowConsumers'; count: number; markets: string[] }
  | { kind: 'stalledViewers'; count: number }
  | { kind: 'lockout'; addresses: number; perAddress: number }
  | { kind: 'keyGuessing'; parallel: number };

export function startAttack(url: string, spec: AttackSpec): Attack {
  switch (spec.kind) {
    case 'flood':
      return flood(url, spec);
    case 'churn':
      return churn(url, spec.markets, spec);
    case 'slowConsumers':
      return slowConsumers(url, spec.markets, spec.count);
    case 'stalledViewers':
      return stalledViewers(url, spec.count);
    case 'lockout':
      return lockout(url, spec);
    case 'keyGuessing':
      return keyGuessing(url, spec);
  }
}
