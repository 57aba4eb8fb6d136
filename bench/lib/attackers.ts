/**
 * @module bench/lib/attackers
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

function wsUrl(url: string): string {
  return `${url.replace(/^http/, 'ws')}/v1/ws`;
}

function countClose(report: AttackReport, code: number): void {
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
    const ws = new WebSocket(wsUrl(url));
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
 * Clients that subscribe to every market's full book and then stop reading. On stop they read
 * again for a moment, so that the close code the relay decided can reach them.
 */
export function slowConsumers(url: string, markets: string[], count: number): Attack {
  const report = emptyReport();
  const clients: WebSocket[] = [];
  for (let index = 0; index < count; index += 1) {
    report.connections += 1;
    const ws = new WebSocket(wsUrl(url));
    clients.push(ws);
    ws.on('error', () => {});
    ws.on('close', (code) => countClose(report, code));
    ws.on('open', () => {
      ws.send(JSON.stringify({ op: 'subscribe', channel: 'book', markets }));
      report.framesSent += 1;
      ws.pause();
    });
  }
  return {
    async stop() {
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
