/**
 * @module relay/session/replay/replay-run
 * One running replay (docs/protocol.md "Replay"): each stream's state at `from` and its record after
 * it (./stream-read.ts), read a page at a time and merged in `rts` order (./merge.ts), each sent as
 * the text that was sent live with `"replay": <id>`
 * added, a `replay_gap` before a record that shows a hole (./gaps.ts), paced at its speed, and
 * `replayed` at the end.
 *
 * A replay never costs the connection its live streams nor gets it closed as a slow consumer: it
 * writes only while the connection's send buffer is under `bufferCeilingBytes` (well below the
 * high-water mark where live messages would be held back) and otherwise waits for the buffer to
 * drain; and it gives the event loop back after every `batch` messages, so other connections' fan-out
 * runs between its batches. Stopping it (replay_stop, the connection closing) ends its reads.
 */
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import type { ReplayGapMessage, ReplaySpeed } from '../../../../packages/protocol/src/protocol/history.ts';
import type { Channel, RequestId } from '../../../../packages/protocol/src/protocol/messages.ts';
import type { HistoryStore } from '../../../history/store.ts';
import { encodeTextFrame, Frame, toFrame } from '../../streams/frame.ts';
import { sentText } from '../../streams/recorded.ts';
import { type Gap, GapFinder } from './gaps.ts';
import { mergeByRts } from './merge.ts';
import type { ReplayPlan } from './replay-plan.ts';
import { streamFromState } from './stream-read.ts';

/** What a replay sees of its connection. */
export interface ReplayOutput {
  /** Bytes waiting for the client; undefined once nothing more is written (relay/session/session-context.ts). */
  readonly backlog: number | undefined;
  write(frame: Frame): void;
  /** Told once when the first replay starts and once when the last ends: replays wait on drains. */
  wantDrains?(wanted: boolean): void;
}

export interface ReplayPacing {
  /** The replay writes only while the send buffer holds fewer bytes than this. */
  bufferCeilingBytes: number;
  /** Messages written between two turns of the event loop given back. */
  batch: number;
  /** How often a replay waiting for the buffer to drain looks again, besides being told it drained. */
  drainCheckMs: number;
}

/** How a replay ended: at `to`, or stopped (a failing read throws). */
export type ReplayEnd = 'done' | 'stopped';

export class ReplayRun {
  readonly id: RequestId;
  /** Stream messages sent so far. */
  messages = 0;
  /** `replay_gap` messages sent so far. */
  gaps = 0;
  readonly #plan: ReplayPlan;
  readonly #store: HistoryStore;
  readonly #output: ReplayOutput;
  readonly #pacing: ReplayPacing;
  readonly #stop = new AbortController();
  #drained: (() => void) | undefined;

  constructor(plan: ReplayPlan, store: HistoryStore, output: ReplayOutput, pacing: ReplayPacing) {
    this.id = plan.id;
    this.#plan = plan;
    this.#store = store;
    this.#output = output;
    this.#pacing = pacing;
  }

  /** Ends the replay at its next step; its reads are released. */
  stop(): void {
    this.#stop.abort();
    this.#drained?.();
  }

  /** The connection's send buffer drained: a replay waiting for room goes on at once. */
  drained(): void {
    this.#drained?.();
  }

  /** Runs the replay to its end; `replayed` (or, on a read failure, an `error`) is the caller's to send. */
  async run(): Promise<ReplayEnd> {
    const { streams, from, to, channel, id } = this.#plan;
    const gaps = new GapFinder(from, to);
    const clock = new ReplayClock(this.#plan.speed);
    const reads = streams.map((stream) => streamFromState(this.#store, stream.key, from, to));
    try {
      let sinceTurn = 0;
      for await (const { record, rts } of reads.length === 1 ? reads[0]! : mergeByRts(reads)) {
        if (this.#stopped) return 'stopped';
        sinceTurn += 1;
        const turn = sinceTurn >= this.#pacing.batch;
        if (turn) sinceTurn = 0;
        const delayMs = clock.delayBefore(rts);
        // Awaited only when there is something to wait for: an await per message is the replay's
        // largest cost at "max".
        if (delayMs > 0 || turn || this.#overCeiling) {
          await this.#wait(delayMs, turn);
          if (this.#stopped) return 'stopped';
        }
        const gap = gaps.before(record, rts);
        if (gap !== undefined) this.#sendGap(gapMessage(id, channel, gap));
        this.#output.write(replayedFrame(sentText(record), id));
        this.messages += 1;
      }
    } catch (error) {
      if (this.#stopped) return 'stopped';
      throw error;
    }
    for (const gap of gaps.unseen(streams)) this.#sendGap(gapMessage(id, channel, gap));
    return 'done';
  }

  get #stopped(): boolean {
    return this.#stop.signal.aborted || this.#output.backlog === undefined;
  }

  get #overCeiling(): boolean {
    return (this.#output.backlog ?? 0) >= this.#pacing.bufferCeilingBytes;
  }

  /** Waits out the pace (`delayMs`), then for room in the send buffer; `turn`: give the event loop a turn. */
  async #wait(delayMs: number, turn: boolean): Promise<void> {
    const signal = this.#stop.signal;
    if (delayMs > 0) await sleep(delayMs, undefined, { signal }).catch(() => undefined);
    else if (turn) await nextTurn(undefined, { signal }).catch(() => undefined);
    while (!this.#stopped && this.#overCeiling) {
      await new Promise<void>((resolve) => {
        const check = setTimeout(resolve, this.#pacing.drainCheckMs);
        this.#drained = () => {
          clearTimeout(check);
          resolve();
        };
      });
      this.#drained = undefined;
    }
  }

  #sendGap(message: ReplayGapMessage): void {
    this.#output.write(toFrame(message));
    this.gaps += 1;
  }
}

/**
 * When each record is due: speed 1 keeps the recorded spacing of `rts`, a multiplier divides it,
 * `max` never waits. The clock starts at the first record, and a replay that fell behind (a slow
 * reader) sends what is due at once rather than skipping.
 */
class ReplayClock {
  readonly #speed: ReplaySpeed;
  #start: { rts: number; at: number } | undefined;

  constructor(speed: ReplaySpeed) {
    this.#speed = speed;
  }

  delayBefore(rts: number): number {
    if (this.#speed === 'max') return 0;
    const now = performance.now();
    this.#start ??= { rts, at: now };
    return this.#start.at + (rts - this.#start.rts) / this.#speed - now;
  }
}

/** The message as it was sent, with the replay's id as its last field. */
export function replayedFrame(sent: string, id: RequestId): Frame {
  const { wire, payloadOffset } = encodeTextFrame(`${sent.slice(0, -1)},"replay":${JSON.stringify(id)}}`);
  return new Frame(wire, payloadOffset, undefined);
}

function gapMessage(id: RequestId, channel: Channel, gap: Gap): ReplayGapMessage {
  return {
    type: 'replay_gap',
    id,
    channel,
    market: gap.market,
    from: new Date(gap.from).toISOString(),
    to: new Date(gap.to).toISOString(),
    ...(gap.reason === undefined ? {} : { reason: gap.reason }),
  };
}
