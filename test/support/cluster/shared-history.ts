/**
 * @module test/support/cluster/shared-history
 * The fixture of the shared history tests (test/cluster/streams/shared-history*.test.ts): a private
 * Redis, a private PostgreSQL and the simulator for the file, relay processes recording into the
 * one PostgreSQL (killed after each test), clients that keep the raw text of each book message, the
 * record as a relay exports it, and its runs of consecutive seq (one run: no gap).
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll } from 'vitest';
import WebSocket from 'ws';
import { targetKeys } from '../../../src/relay/coordination/redis/keys.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import { type PostgresServer, startPostgres } from '../postgres-server.ts';
import { waitFor } from '../wait-for.ts';
import { type ChildRelay, startChildRelay } from './child-relay.ts';
import { useRedis } from './redis.ts';

export interface Received {
  text: string;
  epoch: string;
  seq: number;
}

/** Subscribes to one full book and keeps the raw text of every snapshot and update. */
export async function liveBook(relay: ChildRelay, market: string) {
  const socket = new WebSocket(`${relay.url.replace('http', 'ws')}/v1/ws`, { perMessageDeflate: false });
  const received: Received[] = [];
  socket.on('message', (data) => {
    const text = data.toString();
    const message = JSON.parse(text) as { type: string; epoch: string; seq: number };
    if (message.type === 'snapshot' || message.type === 'update')
      received.push({ text, epoch: message.epoch, seq: message.seq });
  });
  socket.on('error', () => undefined); // a killed relay's socket
  await new Promise((resolve) => socket.once('open', resolve));
  socket.send(JSON.stringify({ op: 'subscribe', channel: 'book', markets: [market] }));
  return { received, close: () => socket.terminate() };
}

/** The book's record as `relay` exports it (NDJSON, every line a message as sent). */
export async function recorded(relay: ChildRelay, market: string, from: number): Promise<Received[]> {
  const query = `market=${market}&from=${new Date(from).toISOString()}`;
  const response = await fetch(`${relay.url}/v1/history/book?${query}`);
  if (response.status !== 200) throw new Error(`export answered ${response.status}`);
  return (await response.text())
    .split('\n')
    .filter((line) => line !== '')
    .map((text) => {
      const message = JSON.parse(text) as { epoch: string; seq: number };
      return { text, epoch: message.epoch, seq: message.seq };
    });
}

export async function health(
  relay: ChildRelay,
): Promise<{ history: { reachable: boolean; writing: boolean } }> {
  return (await (await fetch(`${relay.url}/health`)).json()) as {
    history: { reachable: boolean; writing: boolean };
  };
}

/** The runs of consecutive seq in `records` of one epoch: one run = no gap. */
export function runs(records: readonly Received[]): [number, number][] {
  const seqs = [...new Set(records.map((record) => record.seq))].sort((a, b) => a - b);
  const found: [number, number][] = [];
  for (const seq of seqs) {
    const last = found.at(-1);
    if (last !== undefined && last[1] === seq - 1) last[1] = seq;
    else found.push([seq, seq]);
  }
  return found;
}

/** Redis, PostgreSQL and the simulator for the calling file; relays and sockets for each test. */
export function useSharedHistory() {
  const redis = useRedis();
  let postgres: PostgresServer;
  let sim: SimulatorHandle;
  const relays: ChildRelay[] = [];
  const sockets: { close(): void }[] = [];
  beforeAll(async () => {
    [postgres, sim] = await Promise.all([
      startPostgres(),
      startSimulator({ markets: 3, seed: 48, tickMs: 40 }),
    ]);
  }, 60_000);
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.close();
    await Promise.all(relays.splice(0).map((relay) => relay.stop('SIGKILL')));
  });
  afterAll(async () => {
    await sim?.close();
    await postgres?.remove();
  });

  async function relay(): Promise<ChildRelay> {
    const started = await startChildRelay([
      `--upstream=${sim.url}`,
      `--redis=${redis.server.url}`,
      `--history=${postgres.url}`,
      '--book-poll-ms=50',
      '--price-poll-ms=50',
      '--upstream-rps=1000',
      '--lease-ms=600',
    ]);
    relays.push(started);
    return started;
  }

  async function holderOf(trio: ChildRelay[], market: string): Promise<number> {
    const inspector = new Redis(redis.server.url);
    try {
      const lease = await waitFor(
        'a lease holder',
        async () => (await inspector.get(targetKeys(`book:${market}`).lease)) ?? undefined,
      );
      const instances = await Promise.all(trio.map((at) => at.instance()));
      return instances.findIndex((instance) => lease.startsWith(`${instance} `));
    } finally {
      inspector.disconnect();
    }
  }

  return {
    relay,
    holderOf,
    sockets,
    get postgres() {
      return postgres;
    },
    get sim() {
      return sim;
    },
  };
}
