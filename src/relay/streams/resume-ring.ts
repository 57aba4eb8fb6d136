/**
 * @module relay/streams/resume-ring
 * A stream's resume ring (protocol.md "Sequencing", resume): its last `capacity` updates, numbered
 * one after the other, kept as their wire bytes packed into a few buffers rather than as a Frame,
 * its position and its Buffer per update. Those objects would sit in V8's old generation for as
 * long as the ring keeps them (1,000 updates per stream by default), and every major collection
 * would mark them all again, a cost that grows with every stream and every update kept; bytes in a
 * buffer are not marked.
 * A frame is made again from its bytes only when a client resumes.
 *
 * The bytes go into blocks written once, front to back: a block is let go when the ring has dropped
 * every update in it, so no byte is ever moved or overwritten and a resumed frame may stay a view.
 *
 * The ring is bounded in bytes as well as in updates: its oldest updates go to make room within
 * `maxBytes`, and an update larger than that on its own starts the ring over empty (a resume from
 * before it gets a snapshot). A `rest` body of megabytes would otherwise keep `capacity` copies.
 * And in age: an update older than `maxAgeMs` is not resumed from and goes with the next push, as a
 * cluster's stream log lets its updates expire in Redis. Without it a quiet stream's ring would keep
 * filling for hours, memory no one could tell from a leak.
 */
import { type Frame, frameOfWire } from './frame.ts';

/** Each update is its wire's length (4 bytes, little-endian), when it was kept (ms, a double), then its wire. */
const LENGTH_BYTES = 4;
const HEADER_BYTES = LENGTH_BYTES + 8;
/**
 * A new block is a quarter of what the ring holds, within these bounds: a ring of small updates
 * keeps little besides them, a large one few blocks (three objects each), and at most about three
 * blocks' worth of bytes are not updates held (the dropped front of the first, the unwritten end of
 * the last, an emptied one not yet let go).
 */
const SMALLEST_BLOCK_BYTES = 1024;
const LARGEST_BLOCK_BYTES = 64 * 1024;

interface Block {
  readonly bytes: Buffer;
  /** Where the oldest update still held in this block starts. */
  head: number;
  /** Bytes written so far. */
  used: number;
}

/** What a stream's resume ring holds at most: updates (`--resume-buffer`), bytes, age in ms. */
export interface ResumeBounds {
  updates: number;
  bytes?: number | undefined;
  ms?: number | undefined;
}

/** What a ring holds at most, in bytes, unless told otherwise (`--resume-buffer-bytes`). */
const DEFAULT_RESUME_BUFFER_BYTES = 8 * 1024 * 1024;

export class ResumeRing {
  readonly capacity: number;
  /** The updates' bytes (lengths included) the ring holds at most. */
  readonly maxBytes: number;
  /** How long an update is kept for resume (ms). */
  readonly maxAgeMs: number;
  readonly #now: () => number;
  readonly #blocks: Block[] = [];
  #size = 0;
  #oldestSeq = 0;
  /** The updates' bytes held, lengths included. */
  #heldBytes = 0;

  constructor(
    capacity: number,
    maxBytes = DEFAULT_RESUME_BUFFER_BYTES,
    maxAgeMs = Number.POSITIVE_INFINITY,
    now: () => number = Date.now,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError('capacity must be a positive integer');
    if (!Number.isInteger(maxBytes) || maxBytes < 1)
      throw new RangeError('maxBytes must be a positive integer');
    if (!(maxAgeMs > 0)) throw new RangeError('maxAgeMs must be positive');
    this.capacity = capacity;
    this.maxBytes = maxBytes;
    this.maxAgeMs = maxAgeMs;
    this.#now = now;
  }

  get size(): number {
    return this.#size;
  }

  /** The updates' bytes held (with 12 bytes of length and time each). */
  get heldBytes(): number {
    return this.#heldBytes;
  }

  /** The buffers held, in bytes: the ring's whole memory but for a few small objects. */
  get retainedBytes(): number {
    return this.#blocks.reduce((sum, block) => sum + block.bytes.length, 0);
  }

  /**
   * Keeps update `seq` (a copy of `wire`), dropping the oldest when full. An update that does not
   * follow the newest held starts the ring over: the ones before it can no longer lead up to it.
   */
  push(seq: number, wire: Buffer): void {
    if (this.#size > 0 && seq !== this.#oldestSeq + this.#size) this.clear();
    const bytes = HEADER_BYTES + wire.length;
    if (bytes > this.maxBytes) {
      this.clear();
      return;
    }
    const now = this.#now();
    this.#dropOlderThan(now - this.maxAgeMs);
    if (this.#size === this.capacity) this.#dropOldest();
    while (this.#heldBytes + bytes > this.maxBytes) this.#dropOldest();
    // Blocks the drops emptied go before a new one is made, so the buffers stay within the bound.
    while (this.#blocks.length > 0 && this.#blocks[0]!.head === this.#blocks[0]!.used) this.#blocks.shift();
    const block = this.#blockWithRoom(bytes);
    block.bytes.writeUInt32LE(wire.length, block.used);
    block.bytes.writeDoubleLE(now, block.used + LENGTH_BYTES);
    wire.copy(block.bytes, block.used + HEADER_BYTES);
    block.used += bytes;
    this.#heldBytes += bytes;
    if (this.#size === 0) this.#oldestSeq = seq;
    this.#size += 1;
  }

  /**
   * The updates after `seq` up to the newest, as frames of `epoch`; undefined when the ring no
   * longer (or never did) hold the one right after `seq`.
   */
  framesAfter(seq: number, epoch: string): Frame[] | undefined {
    this.#dropOlderThan(this.#now() - this.maxAgeMs);
    const newest = this.#oldestSeq + this.#size - 1;
    if (this.#size === 0 || seq + 1 < this.#oldestSeq || seq > newest) return undefined;
    const frames: Frame[] = [];
    let next = this.#oldestSeq;
    for (const block of this.#blocks) {
      for (let at = block.head; at < block.used; next++) {
        const length = block.bytes.readUInt32LE(at);
        const start = at + HEADER_BYTES;
        at = start + length;
        if (next > seq) frames.push(frameOfWire(block.bytes.subarray(start, at), { epoch, seq: next }));
      }
    }
    return frames;
  }

  clear(): void {
    this.#blocks.length = 0;
    this.#size = 0;
    this.#oldestSeq = 0;
    this.#heldBytes = 0;
  }

  #dropOlderThan(cutoff: number): void {
    while (this.#size > 0 && this.#oldest().bytes.readDoubleLE(this.#oldest().head + LENGTH_BYTES) < cutoff)
      this.#dropOldest();
  }

  /** The block holding the oldest update; blocks emptied by earlier drops go now (at most one waits). */
  #oldest(): Block {
    while (this.#blocks[0]!.head === this.#blocks[0]!.used) this.#blocks.shift();
    return this.#blocks[0]!;
  }

  #dropOldest(): void {
    const oldest = this.#oldest();
    const bytes = HEADER_BYTES + oldest.bytes.readUInt32LE(oldest.head);
    oldest.head += bytes;
    this.#heldBytes -= bytes;
    this.#size -= 1;
    this.#oldestSeq += 1;
  }

  #blockWithRoom(bytes: number): Block {
    const last = this.#blocks.at(-1);
    if (last !== undefined && last.bytes.length - last.used >= bytes) return last;
    const quarter = Math.min(
      LARGEST_BLOCK_BYTES,
      Math.max(SMALLEST_BLOCK_BYTES, Math.ceil(this.#heldBytes / 4)),
    );
    // Its own memory, not a slice of Node's shared pool: the ring keeps it for minutes.
    const block: Block = { bytes: Buffer.allocUnsafeSlow(Math.max(quarter, bytes)), head: 0, used: 0 };
    this.#blocks.push(block);
    return block;
  }
}
