/**
 * @module observability/record-reach
 * How far back each stream's record goes, for the status page: the store's `extent` of each stream,
 * read in the background and kept. The page refreshes every second; asking the store once per stream
 * each time would be a query per stream per second, so a stream's answer is reused until it is
 * `knownMs` old (the start of a record moves only as retention drops its oldest part). A stream with
 * nothing recorded yet (just subscribed: its first write is a flush window away) is asked again
 * sooner, after `unknownMs`.
 */
import type { HistoryStore } from '../history/store.ts';

export interface RecordReachTimings {
  /** How long a stream's known start is shown before it is read again. */
  knownMs: number;
  /** How long before a stream with nothing recorded is asked again. */
  unknownMs: number;
}

const DEFAULT_TIMINGS: RecordReachTimings = { knownMs: 30_000, unknownMs: 3_000 };

export class RecordReach {
  readonly #store: Pick<HistoryStore, 'extent'>;
  readonly #timings: RecordReachTimings;
  /** Per stream: where its record starts (undefined: nothing held) and when that was read. */
  #known = new Map<string, { oldest: number | undefined; readAt: number }>();
  #reading: Promise<void> | undefined;

  constructor(store: Pick<HistoryStore, 'extent'>, timings = DEFAULT_TIMINGS) {
    this.#store = store;
    this.#timings = timings;
  }

  /**
   * Where each of `streams`' record starts (epoch ms), as last read: undefined while it has not been
   * read yet or nothing of it is held. Starts a read of the streams whose answer is due, unless one
   * is under way; forgets streams no longer asked about.
   */
  oldest(streams: readonly string[], now: number): (stream: string) => number | undefined {
    const asked = new Set(streams);
    for (const stream of this.#known.keys()) if (!asked.has(stream)) this.#known.delete(stream);
    if (this.#reading === undefined) {
      const due = streams.filter((stream) => this.#isDue(stream, now));
      if (due.length > 0) {
        this.#reading = this.#read(due, now).finally(() => {
          this.#reading = undefined;
        });
      }
    }
    const known = new Map([...this.#known].map(([stream, { oldest }]) => [stream, oldest] as const));
    return (stream) => known.get(stream);
  }

  /** Resolves when the read under way (if any) is done: for tests and shutdown. */
  async settled(): Promise<void> {
    await this.#reading;
  }

  #isDue(stream: string, now: number): boolean {
    const entry = this.#known.get(stream);
    if (entry === undefined) return true;
    const wait = entry.oldest === undefined ? this.#timings.unknownMs : this.#timings.knownMs;
    return now - entry.readAt >= wait;
  }

  async #read(streams: readonly string[], now: number): Promise<void> {
    for (const stream of streams) {
      // A store that cannot answer now (a failing disk) leaves the stream unknown, never the page broken.
      const extent = await this.#store.extent(stream).catch(() => undefined);
      this.#known.set(stream, { oldest: extent?.oldest, readAt: now });
    }
  }
}
