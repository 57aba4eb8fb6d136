/**
 * @module history/sent-arena
 * The recorder's buffer for sent messages (history/recorder.ts `PendingBuffer`): each message's
 * UTF-8 bytes copied, as they went out, into one growing buffer outside the JavaScript heap, and
 * beside them only what the bytes do not say (the stream it was sent on, its position and kind) in
 * flat arrays. A flush window holds about 2,000 messages of busy books; kept as strings (the frame's
 * text decoded again) they each lived through several young-generation collections and were copied
 * into the old generation, which the collector then had to mark: that cost more than the store's
 * own writes. The bytes are decoded into text once, at flush time, and the text dies young there.
 * Two pages take turns: one fills while the other's batch is written, then it is reused as it is,
 * its memory kept at the largest flush window's size.
 */
import type { PendingBatch, PendingBuffer } from './recorder.ts';
import type { RecordedMessage } from './store.ts';

/** One sent message as the arena takes it: its bytes are copied, nothing of it is kept. */
export interface SentBytes<Subject> {
  readonly subject: Subject;
  /** The message's JSON as sent (UTF-8). */
  readonly bytes: Uint8Array;
  /** `snapshot` and `update` carry one; any other message is no stream message. */
  readonly position: SentPosition | undefined;
  readonly kind: 'snapshot' | 'update';
}

export interface SentPosition {
  readonly epoch: string;
  readonly seq: number;
}

/** A sent message read back: its text decoded again, with what was kept beside it. */
export type ReadSent<Subject> = (
  subject: Subject,
  sent: { text: string; position: SentPosition | undefined },
  kind: 'snapshot' | 'update',
) => RecordedMessage;

/** A page's first buffer: a second of 50 busy books' messages; it doubles as needed. */
const FIRST_PAGE_BYTES = 256 * 1024;
/** A page this many times larger than its last window needed starts again from the first size. */
const SHRINK_FACTOR = 4;

class Page<Subject> {
  bytes = Buffer.allocUnsafe(FIRST_PAGE_BYTES);
  used = 0;
  readonly ends: number[] = [];
  readonly subjects: Subject[] = [];
  /** The position's epoch, or undefined for a message with no position. */
  readonly epochs: (string | undefined)[] = [];
  readonly seqs: number[] = [];
  readonly snapshots: boolean[] = [];

  add(message: SentBytes<Subject>): void {
    const length = message.bytes.byteLength;
    if (this.used + length > this.bytes.byteLength) this.#grow(this.used + length);
    this.bytes.set(message.bytes, this.used);
    this.used += length;
    this.ends.push(this.used);
    this.subjects.push(message.subject);
    this.epochs.push(message.position?.epoch);
    this.seqs.push(message.position?.seq ?? 0);
    this.snapshots.push(message.kind === 'snapshot');
  }

  read(index: number, readSent: ReadSent<Subject>): RecordedMessage {
    const start = index === 0 ? 0 : (this.ends[index - 1] as number);
    const text = this.bytes.toString('utf8', start, this.ends[index]);
    const epoch = this.epochs[index];
    const position = epoch === undefined ? undefined : { epoch, seq: this.seqs[index] as number };
    const kind = this.snapshots[index] ? 'snapshot' : 'update';
    return readSent(this.subjects[index] as Subject, { text, position }, kind);
  }

  /**
   * Empties the page, keeping its buffer unless it is far larger than the window just written
   * needed (one a stalled store let grow): the arrays let their references go.
   */
  clear(): void {
    if (this.bytes.byteLength > SHRINK_FACTOR * Math.max(this.used, FIRST_PAGE_BYTES))
      this.bytes = Buffer.allocUnsafe(FIRST_PAGE_BYTES);
    this.used = 0;
    this.ends.length = 0;
    this.subjects.length = 0;
    this.epochs.length = 0;
    this.seqs.length = 0;
    this.snapshots.length = 0;
  }

  #grow(needed: number): void {
    let size = this.bytes.byteLength * 2;
    while (size < needed) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.bytes.copy(grown, 0, 0, this.used);
    this.bytes = grown;
  }
}

export class SentArena<Subject> implements PendingBuffer<SentBytes<Subject>> {
  readonly #readSent: ReadSent<Subject>;
  #filling = new Page<Subject>();
  /** The page whose batch was written last, emptied, to fill next. */
  #spare: Page<Subject> | undefined;

  constructor(readSent: ReadSent<Subject>) {
    this.#readSent = readSent;
  }

  get length(): number {
    return this.#filling.ends.length;
  }

  push(message: SentBytes<Subject>): void {
    this.#filling.add(message);
  }

  take(): PendingBatch {
    const page = this.#filling;
    this.#filling = this.#spare ?? new Page<Subject>();
    this.#spare = undefined;
    const readSent = this.#readSent;
    return {
      length: page.ends.length,
      record: (index) => page.read(index, readSent),
      release: () => {
        page.clear();
        this.#spare = page;
      },
    };
  }
}
