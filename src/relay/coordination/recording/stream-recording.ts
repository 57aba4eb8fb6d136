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
 *
 * An ask the table leaves unanswered (a silent network: the connection fails only much later) is
 * given up after half a renewal period, and the next renewal asks again. Its answer, if it comes at
 * last, counts only while no later ask has been answered: it tells of the table at or after it was
 * sent, and the deadline it gives is counted from then, so the fence holds however late it comes.
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
  frame: Pick<Frame, 'bytes' | 'position'>,
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
  /** The asks sent for it so far; the newest one answered; when the one in flight was sent. */
  asks: number;
  answered: number;
  askedAt: number | undefined;
}

export class StreamRecording {
  readonly #options: StreamRecordingOptions;
  readonly #now: () => number;
  readonly #leaseMs: number;
  /** How long an ask may stay unanswered before the next one is sent, and `close()` waits for answers. */
  readonly #askMs: number;
  readonly #served = new Map<string, Served>();
  /** Asks not yet answered, for `close()` to let go what their answers take. */
  readonly #pending = new Set<Promise<void>>();
  readonly #timer: NodeJS.Timeout;
  #closed = false;

  constructor(options: StreamRecordingOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#leaseMs = options.leaseMs ?? LEASE_MS;
    const renewMs = options.renewMs ?? RENEW_MS;
    this.#askMs = renewMs / 2;
    this.#timer = setInterval(() => this.#renew(), renewMs).unref();
  }

  /** The publisher's sink: a message is recorded while this relay holds its stream's recording lease. */
  readonly sink: RecordSink = (stream, frame, kind) => {
    // The lease holder of the target records these for the cluster (redis/numbered-record.ts).
    if (this.#closed || (isNumberedChannel(stream.channel) && stream.group === undefined)) return;
    const served = this.#served.get(stream.key);
    if (served === undefined || served.stream !== stream) {
      const first: Served = { stream, until: 0, from: undefined, asks: 0, answered: 0, askedAt: undefined };
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

  /**
   * Lets every lease go (the relay stops), also one an ask in flight takes when it is answered
   * within its bound; a lease whose answer comes later expires by itself.
   */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    const held = [...this.#served.values()].filter((served) => served.until > 0);
    this.#served.clear();
    let bound: NodeJS.Timeout | undefined;
    await Promise.all([
      ...held.map((served) => this.#release(served)),
      Promise.race([
        Promise.all(this.#pending),
        new Promise<void>((resolve) => {
          bound = setTimeout(resolve, this.#askMs).unref();
        }),
      ]),
    ]);
    clearTimeout(bound);
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
    const sentAt = this.#now();
    if (this.#closed || (served.askedAt !== undefined && sentAt - served.askedAt < this.#askMs)) return;
    served.asks += 1;
    const ask = served.asks;
    served.askedAt = sentAt;
    const answered = this.#options.table.hold(served.stream.key, this.#leaseMs).then(
      (held) => this.#answer(served, ask, sentAt, held),
      () => {
        // The table is away: this relay records on until its deadline, then nobody does (a gap, never twice).
      },
    );
    this.#pending.add(answered);
    try {
      await answered;
    } finally {
      this.#pending.delete(answered);
      if (served.asks === ask) served.askedAt = undefined;
    }
  }

  /** The answer to ask number `ask` of `served`, sent at `sentAt`: whether this relay holds the lease. */
  async #answer(served: Served, ask: number, sentAt: number, held: boolean): Promise<void> {
    const key = served.stream.key;
    if (this.#served.get(key) !== served) {
      // A later stream of the key asked after this one: its ask renews the same lease, so this
      // late answer must not let it go (another relay would record beside it).
      if (held && !this.#served.has(key)) await this.#release(served);
      return;
    }
    // An older ask answered after a newer one tells of the table before it did.
    if (ask <= served.answered) return;
    served.answered = ask;
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
    this.#options.record(stream, { bytes: Buffer.from(text), position: frame.position }, 'snapshot');
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
