/**
 * @module bench/lib/frame-sample
 * Proof that the bytes a measured group reads are real messages: one client of the group (its
 * first) has every frame parsed and decoded, compact arrays through the codec with the stream
 * numbers its `subscribed` announced, and keeps each book and each `rest` body from snapshot +
 * updates, checking `seq` and the checksum of every message. One client in a thousand costs the
 * generator next to nothing.
 */
import { applyBookUpdate, type BookState, bookChecksum } from '../../packages/protocol/src/protocol/book.ts';
import {
  type CompactStreamIdentity,
  decodeCompactStreamMessage,
} from '../../packages/protocol/src/protocol/compact.ts';
import { applyPatch, restChecksum } from '../../packages/protocol/src/protocol/json-patch.ts';
import type {
  BookDepth,
  Channel,
  JsonValue,
  StreamMessage,
} from '../../packages/protocol/src/protocol/messages.ts';
import type { GroupCounts } from './frame-counts.ts';

interface Kept {
  seq: number;
  book: BookState | undefined;
  body: JsonValue | undefined;
}

export class FrameSample {
  readonly #counts: GroupCounts;
  readonly #numbers = new Map<number, CompactStreamIdentity>();
  readonly #streams = new Map<string, Kept>();

  constructor(counts: GroupCounts) {
    this.#counts = counts;
  }

  read(data: Buffer): void {
    let value: unknown;
    try {
      value = JSON.parse(data.toString('utf8'));
    } catch {
      this.#fail();
      return;
    }
    if (Array.isArray(value)) {
      const decoded = decodeCompactStreamMessage(value, this.#numbers);
      if (decoded.ok) this.#counts.sampledCompact += 1;
      if (decoded.ok) this.#check(decoded.message);
      else this.#fail();
      return;
    }
    if (typeof value !== 'object' || value === null) {
      this.#fail();
      return;
    }
    const message = value as { type?: unknown };
    if (message.type === 'subscribed') this.#learn(value as Subscribed);
    else if (message.type === 'snapshot' || message.type === 'update') this.#check(value as StreamMessage);
  }

  #learn(subscribed: Subscribed): void {
    for (const [market, stream] of Object.entries(subscribed.streams ?? {})) {
      this.#numbers.set(stream, {
        channel: subscribed.channel,
        market,
        ...(subscribed.channel === 'book' ? { depth: subscribed.depth ?? null } : {}),
      });
    }
  }

  #check(message: StreamMessage): void {
    this.#counts.sampled += 1;
    // A `rest` message names its stream in `path` on the wire, the others in `market`.
    const stream = message.path ?? message.market;
    const key = `${message.channel} ${stream} ${message.channel === 'book' ? message.depth : ''}`;
    const kept = this.#streams.get(key);
    if (message.type === 'snapshot') {
      const book = message.channel === 'book' ? { ...message.data } : undefined;
      const body = message.channel === 'rest' ? message.data : undefined;
      this.#streams.set(key, { seq: message.seq, book, body });
      if (message.channel === 'book' && bookChecksum(book as BookState) !== message.checksum) this.#fail();
      if (message.channel === 'rest' && restChecksum(message.data) !== message.checksum) this.#fail();
      return;
    }
    // A paced subscription's conflated update names the seq it applies to.
    if (kept === undefined || (message.prev_seq ?? message.seq - 1) !== kept.seq) {
      this.#fail();
      return;
    }
    kept.seq = message.seq;
    if (message.channel === 'book' && kept.book !== undefined) {
      kept.book = applyBookUpdate(kept.book, message.data);
      if (bookChecksum(kept.book) !== message.checksum) this.#fail();
    } else if (message.channel === 'rest' && kept.body !== undefined) {
      try {
        kept.body = applyPatch(kept.body, message.data);
        if (restChecksum(kept.body) !== message.checksum) this.#fail();
      } catch {
        this.#fail();
      }
    }
  }

  #fail(): void {
    this.#counts.sampleFailures += 1;
  }
}

interface Subscribed {
  channel: Channel;
  depth?: BookDepth;
  /** Compact connections: each market's stream number. */
  streams?: Record<string, number>;
}
