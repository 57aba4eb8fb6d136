/**
 * @module relay/coordination/recording/stream-recording
 * Which relay of a cluster records a stream it numbers itself into the history store the cluster
 * shares (docs/cluster.md "One history for the cluster"): `trades`, `market`, `probabilities`,
 * `oracle`, `markets`, `candles`, `rest`, `orders` and the grouped books. Every relay serving such a
 * stream numbers it in an epoch of its own, so one relay's messages are the stream's record: the
 * one holding the stream's recording lease (./lease-table.ts). A relay asks for it when it first
 * serves the stream, renews it every `renewMs` while it still holds the stream, and lets it go
 * when it no longer does; a relay that holds the stream but not the lease asks again every
 * `renewMs`, so when the holder lets go or dies (its lease expires) another takes over.
 *
 * On taking the lease a relay records the stream's current state first, as a `snapshot` at its
 * position timed at the takeover, so that the record folds from there (relay/streams/state-at.ts)
 * and a `replay` marks the hand-over with one `replay_gap` (a new epoch in the record).
 *
 * The fence: reads go in `rts` order, so what matters is that nothing the old holder recorded lies
 * after the new holder's first message, whenever the old holder's writes land. The old holder
 * records only until its own deadline, a sixth of the lease before it expires counted from when it
 * sent its last renewal (so a relay paused past its lease records nothing once it wakes); the new
 * holder took the lease after it expired, and its first message is timed at the takeover.
 * Each relay's epochs are its own, so no message is recorded twice either.
 */
import { isNumberedChannel } from '../../channels/relay-registry.ts';
import type { Frame } from '../../streams/frame.ts';
import type { RecordSink } from '../../streams/publisher.ts';
import type { RecordedSubject } from '../../streams/recorded.ts';
import type { AnyStream } from '../../streams/stream.ts';
import type { LeaseTable } from './lease-table.ts';

/** A recording lease outlives two missed renewals, but a relay that died not for long. */
const LEASE_MS = 6_000;
/** How often a held lease is renewed, and one held elsewhere asked for again. */
const RENEW_MS = 2_000;
/**
 * The part of a lease (1 s of 6 s) this relay does not record in: room for the clocks of two hosts
 * to differ and for a renewal's answer still on its way.
 */
const MARGIN_PART = 1 / 6;

/** Takes what the recording lease holder records: the message as sent, or its takeover snapshot. */
export type LeasedRecordSink = (
  subject: RecordedSubject,
  frame: Pick<Frame, 'text' | 'position'>,
  kind: 'snapshot' | 'update',
) => void;

export interface StreamRecordingOptions {
  table: LeaseTable;
  record: LeasedRecordSink;
  /** Whether this relay still holds `stream` (it is in its registry). */
  holds(stream: AnyStream): boolean;
  now?: () => number;
  leaseMs?: number;
  renewMs?: number;
}

/** One stream this relay serves, as far as its recording goes. */
interface Served {
  readonly stream: AnyStream;
  /** Until when (`now()`) this relay records it; in the past while another relay does. */
  until: number;
  /** When this relay began recording it, while a message received before that may still come. */
  from: number | undefined;
  asking: boolean;
}

export class StreamRecording {
  readonly #options: StreamRecordingOptions;
  readonly #now: () => number;
  readonly #leaseMs: number;
  readonly #served = new Map<string, Served>();
  readonly #timer: NodeJS.Timeout;

  constructor(options: StreamRecordingOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#leaseMs = options.leaseMs ?? LEASE_MS;
    this.#timer = setInterval(() => this.#renew(), options.renewMs ?? RENEW_MS).unref();
  }

  /** The publisher's sink: a message is recorded while this relay holds its stream's recording lease. */
  readonly sink: RecordSink = (stream, frame, kind) => {
    // The lease holder of the target records these for the cluster (redis/numbered-record.ts).
    if (isNumberedChannel(stream.channel) && stream.group === undefined) return;
    const served = this.#served.get(stream.key);
    if (served === undefined || served.stream !== stream) {
      const first: Served = { stream, until: 0, from: undefined, asking: false };
      this.#served.set(stream.key, first);
      void this.#ask(first);
      return;
    }
    if (served.until <= this.#now()) return;
    if (served.from !== undefined && Date.parse(rtsOf(frame.text)) < served.from) {
      // Received before the takeover: the state after it, timed at the takeover, keeps the order.
      this.#snapshot(served, served.from);
      return;
    }
    served.from = undefined;
    this.#options.record(stream, frame, kind);
  };

  /** Lets every lease go (the relay stops). */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    const held = [...this.#served.values()].filter((served) => served.until > 0);
    this.#served.clear();
    await Promise.all(held.map((served) => this.#release(served)));
  }

  #renew(): void {
    for (const [key, served] of this.#served) {
      if (this.#options.holds(served.stream)) void this.#ask(served);
      else {
        this.#served.delete(key);
        void this.#release(served);
      }
    }
  }

  async #ask(served: Served): Promise<void> {
    if (served.asking) return;
    served.asking = true;
    const key = served.stream.key;
    const sentAt = this.#now();
    try {
      const held = await this.#options.table.hold(key, this.#leaseMs);
      if (this.#served.get(key) !== served) {
        // A later stream of the key asked after this one: its ask renews the same lease, so this
        // late answer must not let it go (another relay would record beside it).
        if (held && !this.#served.has(key)) await this.#release(served);
        return;
      }
      if (!held) {
        served.until = 0;
        return;
      }
      const now = this.#now();
      const lapsed = served.until <= now;
      served.until = sentAt + this.#leaseMs * (1 - MARGIN_PART);
      // An answer after its own deadline (a paused relay, a slow reply) may be for a lease that
      // expired and was taken meanwhile: the next ask's answer takes over, if it comes in time.
      if (lapsed && served.until > now) {
        served.from = now;
        this.#snapshot(served, now);
      }
    } catch {
      // The table is away: this relay records on until its deadline, then nobody does (a gap, never twice).
    } finally {
      served.asking = false;
    }
  }

  async #release(served: Served): Promise<void> {
    served.until = 0;
    try {
      await this.#options.table.release(served.stream.key);
    } catch {
      // The lease expires by itself.
    }
  }

  /** The stream's current state at its position, timed at `at` (ms). */
  #snapshot(served: Served, at: number): void {
    const { stream } = served;
    if (!stream.hasState) return;
    const frame = stream.snapshotFrame();
    const text = retimed(frame.text, new Date(at).toISOString());
    this.#options.record(stream, { text, position: frame.position }, 'snapshot');
  }
}

/** The message's own `rts`: a JSON string escapes every `"` inside it, so the first `"rts":"` is its key. */
function rtsOf(text: string): string {
  const start = text.indexOf(RTS) + RTS.length;
  return text.slice(start, text.indexOf('"', start));
}

function retimed(text: string, rts: string): string {
  const start = text.indexOf(RTS) + RTS.length;
  return `${text.slice(0, start)}${rts}${text.slice(text.indexOf('"', start))}`;
}

const RTS = '"rts":"';
