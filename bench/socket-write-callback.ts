/**
 * @module bench/socket-write-callback
 * `node --import tsx bench/socket-write-callback.ts [--sockets 2000] [--blocks 15] [--rounds 100]`:
 * what a write callback costs the fan-out's socket write (ws/socket-writer.ts). One process writes a
 * 500-byte buffer to each of `sockets` loopback sockets per round (a child process reads them),
 * three ways in alternated blocks of `rounds` rounds: no callback; a callback on every write (Node
 * queues a tick for it even when the kernel took the write at once); and no callback, with an empty
 * write carrying the callback only where Node still holds the write (what the relay does). The
 * writer's CPU per write, median of the blocks, user and kernel apart.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median } from './lib/latency.ts';
import { sleep } from './lib/progress.ts';
import { fixed } from './lib/report.ts';

const { values } = parseArgs({
  options: {
    sockets: { type: 'string', default: '2000' },
    blocks: { type: 'string', default: '15' },
    rounds: { type: 'string', default: '100' },
    reader: { type: 'string' },
  },
});

const FRAME = Buffer.alloc(500, 0x61);
const NOTHING = Buffer.alloc(0);
const ROUND_GAP_MS = 5;

type Way = 'no callback' | 'callback on every write' | 'callback only where Node holds the write';
const WAYS: readonly Way[] = [
  'no callback',
  'callback on every write',
  'callback only where Node holds the write',
];

function written(): void {}

function writeAll(sockets: readonly Socket[], way: Way): void {
  if (way === 'no callback') for (const socket of sockets) socket.write(FRAME);
  else if (way === 'callback on every write') for (const socket of sockets) socket.write(FRAME, written);
  else
    for (const socket of sockets) {
      socket.write(FRAME);
      if (socket.writableLength > 0) socket.write(NOTHING, written);
    }
}

/** The writer's CPU per write over one block, µs. */
async function block(
  sockets: readonly Socket[],
  way: Way,
  rounds: number,
): Promise<{ user: number; system: number }> {
  const start = process.cpuUsage();
  for (let round = 0; round < rounds; round++) {
    writeAll(sockets, way);
    await sleep(ROUND_GAP_MS);
  }
  const { user, system } = process.cpuUsage(start);
  const writes = rounds * sockets.length;
  return { user: user / writes, system: system / writes };
}

async function readAll(port: number, count: number): Promise<void> {
  for (let i = 0; i < count; i++) connect(port, '127.0.0.1').on('data', () => undefined);
}

if (values.reader !== undefined) {
  await readAll(Number(values.reader), Number(values.sockets));
} else {
  const count = Number(values.sockets);
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    socket.setNoDelay(true);
    sockets.push(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const reader = fork(
    fileURLToPath(import.meta.url),
    ['--reader', String(port), '--sockets', String(count)],
    {
      execArgv: ['--import', 'tsx'],
    },
  );
  while (sockets.length < count) await sleep(10);

  const results = new Map<Way, { user: number; system: number }[]>(WAYS.map((way) => [way, []]));
  for (let b = 0; b < Number(values.blocks); b++)
    for (const way of WAYS) results.get(way)!.push(await block(sockets, way, Number(values.rounds)));

  console.log(
    `${count} sockets, ${FRAME.length}-byte writes, median of ${values.blocks} blocks of ${values.rounds} rounds`,
  );
  console.log('| way | user µs / write | kernel µs / write | total |');
  console.log('|---|---|---|---|');
  for (const [way, blocks] of results) {
    const user = median(blocks.map((b) => b.user));
    const system = median(blocks.map((b) => b.system));
    const total = median(blocks.map((b) => b.user + b.system));
    console.log(`| ${way} | ${fixed(user, 2)} | ${fixed(system, 2)} | ${fixed(total, 2)} |`);
  }
  reader.kill();
  for (const socket of sockets) socket.destroy();
  server.close();
}
