/**
 * @module bench/history/read-back-arms
 * Reading the record back, against the wire of docs/protocol.md "History and replay", on a relay
 * whose store was seeded with one hour of one busy book (./seed.ts) and which serves that book and
 * a neighbour live:
 * - replay at `"max"` of the seeded hour to one client: its messages per second from the request to
 *   `replayed`, and the neighbour's live book's longest wait between two messages during it, against
 *   the same client's longest wait over a window just before (its baseline);
 * - `since` one hour back on the seeded book: the time from the request to the first message, and to
 *   the first live one (the first whose `rts` is not before the request: recorded ones are older).
 * A relay that refuses the op (an `error` to it, or a `subscribed` reply without `history`) is
 * reported as "not available" with its answer, and the run goes on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BenchOptions } from '../lib/options.ts';
import { progress, sleep } from '../lib/progress.ts';
import { type Simulator, startServer } from '../lib/servers.ts';
import { POLL_MS } from './recording-arms.ts';
import { type SeededRecord, seedBook } from './seed.ts';
import { WireClient, type WireMessage } from './wire-client.ts';

const HOUR_MS = 3_600_000;
const REPLAY_ID = 'bench-replay';
const SINCE_ID = 'bench-since';

export type Availability<T> = { available: true; result: T } | { available: false; answer: string };

export interface ReplayFigures {
  messages: number;
  seconds: number;
  messagesPerSec: number;
  /** The neighbour's longest wait before the replay (its baseline) and during it (ms). */
  neighbourBaselineMs: number;
  neighbourDuringMs: number;
  /** The neighbour's limit: max(1.5x, +1 s) of its baseline. */
  neighbourLimitMs: number;
}

export interface SinceFigures {
  history: unknown;
  /** From the request to the first stream message, and to the first live one (ms). */
  firstMessageMs: number;
  firstLiveMs: number;
  /** Stream messages before the first live one (the record read back). */
  recordedMessages: number;
}

export interface ReadBackResult {
  seeded: SeededRecord;
  replay: Availability<ReplayFigures>;
  since: Availability<SinceFigures>;
}

export async function runReadBackArms(sim: Simulator, options: BenchOptions): Promise<ReadBackResult> {
  const [market, neighbour] = sim.markets;
  if (market === undefined || neighbour === undefined)
    throw new Error('the simulator has fewer than 2 busy markets');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-history-seeded-'));
  try {
    progress('history: seeding one hour of one busy book');
    // It ends a minute ago: the relay's own record of the book (from its start) follows it.
    const seeded = await seedBook(dataDir, market, {
      durationMs: HOUR_MS,
      intervalMs: POLL_MS,
      endsAgoMs: 60_000,
    });
    const relay = await startServer('relay', {
      upstream: sim.url,
      pollMs: POLL_MS,
      history: { store: 'embedded', dataDir },
    });
    try {
      progress(`history: replay of ${seeded.messages} messages at "max"`);
      const replay = await unlessItFails(replayArm(relay.url, seeded, neighbour, options));
      progress('history: since one hour back');
      const since = await unlessItFails(sinceArm(relay.url, market));
      return { seeded, replay, since };
    } finally {
      await relay.child.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** An arm that times out or breaks is reported as not available, with why; the run goes on. */
async function unlessItFails<T>(arm: Promise<Availability<T>>): Promise<Availability<T>> {
  try {
    return await arm;
  } catch (error) {
    return { available: false, answer: error instanceof Error ? error.message : String(error) };
  }
}

async function replayArm(
  url: string,
  seeded: SeededRecord,
  neighbourMarket: string,
  options: BenchOptions,
): Promise<Availability<ReplayFigures>> {
  const neighbour = await WireClient.connect(url);
  const reader = await WireClient.connect(url);
  try {
    neighbour.send({
      op: 'subscribe',
      id: 'neighbour',
      channel: 'book',
      markets: [neighbourMarket],
      depth: 10,
    });
    await neighbour.next('the neighbour book', (message) => message.type === 'snapshot', 15_000);
    neighbour.resetCounts();
    await sleep(options.quick ? 3_000 : 6_000);
    const neighbourBaselineMs = neighbour.longestWaitMs;
    let messages = 0;
    reader.onMessage = (message) => {
      if (message.replay === REPLAY_ID) messages += 1;
    };
    neighbour.resetCounts();
    const started = performance.now();
    const ended = reader.next(
      'replayed or an error',
      (message) => message.id === REPLAY_ID && (message.type === 'replayed' || message.type === 'error'),
      60_000,
    );
    reader.send({
      op: 'replay',
      id: REPLAY_ID,
      channel: 'book',
      markets: [seeded.market],
      depth: 10,
      from: new Date(seeded.from).toISOString(),
      to: new Date(seeded.to).toISOString(),
      speed: 'max',
    });
    const end: WireMessage = await ended;
    if (end.type === 'error')
      return { available: false, answer: `the relay answered ${JSON.stringify(end)}` };
    const seconds = (performance.now() - started) / 1000;
    return {
      available: true,
      result: {
        messages,
        seconds,
        messagesPerSec: messages / seconds,
        neighbourBaselineMs,
        neighbourDuringMs: neighbour.longestWaitMs,
        neighbourLimitMs: Math.max(1.5 * neighbourBaselineMs, neighbourBaselineMs + 1_000),
      },
    };
  } finally {
    neighbour.close();
    reader.close();
  }
}

async function sinceArm(url: string, market: string): Promise<Availability<SinceFigures>> {
  const client = await WireClient.connect(url);
  try {
    const askedAt = Date.now();
    const started = performance.now();
    let firstMessageMs: number | undefined;
    let recordedMessages = 0;
    const firstLive = new Promise<number>((resolve) => {
      client.onMessage = (message, at) => {
        if (message.type !== 'snapshot' && message.type !== 'update') return;
        firstMessageMs ??= at - started;
        if (Date.parse(String(message.rts)) >= askedAt) resolve(at - started);
        else recordedMessages += 1;
      };
    });
    client.send({
      op: 'subscribe',
      id: SINCE_ID,
      channel: 'book',
      markets: [market],
      depth: 10,
      since: new Date(askedAt - HOUR_MS).toISOString(),
    });
    const reply = await client.reply(SINCE_ID);
    if (reply.type !== 'subscribed' || reply.history === undefined)
      return { available: false, answer: `the relay answered ${JSON.stringify(reply)}` };
    let timer: NodeJS.Timeout | undefined;
    const firstLiveMs = await Promise.race([
      firstLive,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('no live message within 60 s of a since')), 60_000);
      }),
    ]).finally(() => clearTimeout(timer));
    return {
      available: true,
      result: {
        history: reply.history,
        firstMessageMs: firstMessageMs ?? firstLiveMs,
        firstLiveMs,
        recordedMessages,
      },
    };
  } finally {
    client.close();
  }
}
