/**
 * @module bench/client-messages
 * `node --import tsx bench/client-messages.ts [--messages N] [--levels L] [--rounds R]`: per-message
 * work of the two client SDKs on the same frames. It builds one full `book` stream (a snapshot of L
 * levels a side, then N updates of one or two level changes on one side, each with the checksum the
 * relay's reference code gives), feeds it to the JavaScript SDK through an injected socket (its
 * message handler: parse, route, apply, checksum, events) and to the Python client's frame handler,
 * also through its receive loop (clients/python/bench/per_message.py, run by `MARKET_RELAY_PYTHON`
 * or /usr/bin/python3). It prints CPU microseconds per message for each (CPU time: the machine may
 * be shared), the best of R rounds, and their ratio; both must end on the same verified book.
 * `--keep-frames FILE` writes the frames there and keeps them, for
 * `python clients/python/bench/per_message.py FILE --profile`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { WebSocketLike } from '../packages/client/src/connection/socket.ts';
import { connect } from '../packages/client/src/node.ts';
import { applyBookUpdate, type BookState, bookChecksum } from '../packages/protocol/src/protocol/book.ts';
import type { Level } from '../packages/protocol/src/protocol/messages.ts';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '20000' },
    levels: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '5' },
    'keep-frames': { type: 'string' },
  },
});
const MESSAGES = Number(values.messages);
const LEVELS = Number(values.levels);
const ROUNDS = Number(values.rounds);
const MARKET = '3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f';
const PYTHON = process.env.MARKET_RELAY_PYTHON ?? '/usr/bin/python3';
const PER_MESSAGE_PY = fileURLToPath(new URL('../clients/python/bench/per_message.py', import.meta.url));

/** A seeded generator (mulberry32): the same frames on every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = seeded(35);

/** A price of `ticks` ten-thousandths, as upstream writes it (8 decimals); never through a float. */
const price = (ticks: number): string => `0.${String(ticks).padStart(4, '0')}0000`;
const size = (): string =>
  `${1 + Math.floor(random() * 5000)}.${String(Math.floor(random() * 100)).padStart(2, '0')}`;

/** Changes to one side: mostly sizes near the top, some levels removed, some new prices. */
function sideChanges(levels: readonly Level[], ticksOf: Map<string, number>, step: number): Level[] {
  const changes = new Map<string, string>();
  const count = 1 + Math.floor(random() * 2);
  for (let k = 0; k < count; k++) {
    const action = random();
    const index = Math.floor(random() * random() * levels.length);
    const level = levels[index];
    if (level === undefined) continue;
    if (action < 0.6) changes.set(level[0], size());
    else if (action < 0.8 && levels.length > LEVELS / 2) changes.set(level[0], '0');
    else changes.set(price(ticksOf.get(level[0])! + step * (1 + Math.floor(random() * 3))), size());
  }
  return [...changes.entries()];
}

function buildFrames(): string[] {
  const bids: Level[] = [];
  const asks: Level[] = [];
  for (let i = 0; i < LEVELS; i++) {
    bids.push([price(4000 - 2 * i), size()]);
    asks.push([price(6000 + 2 * i), size()]);
  }
  let state: BookState = { bids, asks };
  const frame = (type: 'snapshot' | 'update', seq: number, data: object) =>
    JSON.stringify({
      type,
      channel: 'book',
      market: MARKET,
      epoch: 'e1',
      seq,
      ts: '2026-01-01T00:00:00.000Z',
      rts: '2026-01-01T00:00:00.000Z',
      data,
      checksum: bookChecksum(state),
    });
  const frames = [frame('snapshot', 1, { bids, asks })];
  const ticksOf = new Map<string, number>();
  for (let seq = 2; seq <= MESSAGES + 1; seq++) {
    for (const [p] of [...state.bids, ...state.asks]) {
      if (!ticksOf.has(p)) ticksOf.set(p, Number(p.slice(2, 6)));
    }
    const bidSide = random() < 0.5;
    // Best first, as the relay sends them.
    const update = {
      bids: bidSide ? sideChanges(state.bids, ticksOf, -1).sort((x, y) => (x[0] < y[0] ? 1 : -1)) : [],
      asks: bidSide ? [] : sideChanges(state.asks, ticksOf, 1).sort((x, y) => (x[0] < y[0] ? -1 : 1)),
    };
    state = applyBookUpdate(state, update);
    frames.push(frame('update', seq, update));
  }
  return frames;
}

/** The socket the JavaScript SDK is given: open at once, fed by the bench. */
class FedSocket implements WebSocketLike {
  static last: FedSocket | undefined;
  readonly readyState = 1;
  onopen: ((event: never) => void) | null = null;
  onmessage: ((event: never) => void) | null = null;
  onclose: ((event: never) => void) | null = null;
  onerror: ((event: never) => void) | null = null;
  constructor() {
    FedSocket.last = this;
  }
  send(): void {}
  close(): void {}
}

async function javascriptRound(frames: readonly string[]): Promise<{ seconds: number; state: BookState }> {
  const client = connect('ws://127.0.0.1:9', { encoding: 'json', WebSocket: FedSocket });
  const book = client.subscribeBook(MARKET);
  let updates = 0;
  book.on('update', () => updates++);
  const socket = FedSocket.last!;
  (socket.onopen as () => void)();
  const deliver = socket.onmessage as (event: { data: string }) => void;
  const started = process.cpuUsage();
  for (const data of frames) deliver({ data });
  const used = process.cpuUsage(started);
  const seconds = (used.user + used.system) / 1e6;
  if (book.status !== 'live' || updates !== frames.length - 1) {
    throw new Error(`the JavaScript SDK did not apply every frame: ${book.status}, ${updates} updates`);
  }
  const state = book.state!;
  await client.close();
  return { seconds, state };
}

const frames = buildFrames();
const scratch = mkdtempSync(join(tmpdir(), 'client-messages-'));
try {
  const file = values['keep-frames'] ?? join(scratch, 'frames.jsonl');
  writeFileSync(file, frames.join('\n'));
  await javascriptRound(frames); // warm-up: the JIT
  const js: number[] = [];
  let jsState: BookState | undefined;
  for (let round = 0; round < ROUNDS; round++) {
    const { seconds, state } = await javascriptRound(frames);
    js.push(seconds);
    jsState = state;
  }
  const run = spawnSync(PYTHON, [PER_MESSAGE_PY, file, '--rounds', String(ROUNDS)], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`${PER_MESSAGE_PY}: ${run.stderr}`);
  const python = JSON.parse(run.stdout) as {
    us_per_message: number;
    us_per_message_received: number;
    final: BookState;
  };
  if (JSON.stringify(python.final) !== JSON.stringify({ bids: jsState!.bids, asks: jsState!.asks })) {
    throw new Error('the two clients ended on different books');
  }
  const jsMicros = (Math.min(...js) / frames.length) * 1e6;
  console.log(`${frames.length} book frames (${LEVELS} levels a side), best of ${ROUNDS} rounds`);
  console.log(`| client | CPU µs per message |\n|---|---|`);
  console.log(`| JavaScript SDK (node ${process.versions.node}) | ${jsMicros.toFixed(2)} |`);
  console.log(`| Python client (${PYTHON}) | ${python.us_per_message.toFixed(2)} |`);
  console.log(`| Python client, with its receive loop | ${python.us_per_message_received.toFixed(2)} |`);
  console.log(`Python / JavaScript: ${(python.us_per_message / jsMicros).toFixed(2)}x`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
