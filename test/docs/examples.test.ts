/**
 * @module test/docs/examples.test
 * The JSON examples of docs/protocol.md are true: requests pass the relay's request parser, relay
 * messages match the AsyncAPI schemas, and the book examples, read in order as one session, keep
 * seq continuity and carry the right checksums — as does the worked checksum example.
 */
import { readFileSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CompactStreamIdentity,
  decodeCompactStreamMessage,
} from '../../packages/protocol/src/protocol/compact.ts';
import { clientRequest, withStreamIds } from '../../packages/protocol/src/protocol/requests.ts';
import { referenceBookChecksum } from '../support/reference-checksum.ts';
import {
  compilePayload,
  type ParsedAsyncApi,
  parseAsyncApi,
  protocolDocPath,
  relayMessageFor,
} from './asyncapi-document.ts';

const doc = readFileSync(protocolDocPath, 'utf8');

type Json = Record<string, unknown>;
type Level = [string, string];

/** Every ```json block of the doc, in order; each holds one JSON object. */
const examples: Json[] = [...doc.matchAll(/```json\n([\s\S]*?)\n```/g)].map(
  (m) => JSON.parse(m[1] ?? '') as Json,
);
/** Every ```json compact block ("Compact encoding"): one compact array each. */
const compactExamples: unknown[] = [...doc.matchAll(/```json compact\n([\s\S]*?)\n```/g)].map(
  (m) => JSON.parse(m[1] ?? '') as unknown,
);

interface BookMessage {
  type: 'snapshot' | 'update';
  market: string;
  depth: number | null;
  epoch: string;
  seq: number;
  prev_seq?: number;
  data: { bids: Level[]; asks: Level[]; last_price?: string };
  checksum: number;
}

/** A client's book per protocol.md "Maintaining a book", written from the doc, not the relay. */
class ClientBook {
  readonly bids = new Map<string, string>();
  readonly asks = new Map<string, string>();
  constructor(
    readonly epoch: string,
    public seq: number,
  ) {}

  copy(): ClientBook {
    const copy = new ClientBook(this.epoch, this.seq);
    for (const [price, size] of this.bids) copy.bids.set(price, size);
    for (const [price, size] of this.asks) copy.asks.set(price, size);
    return copy;
  }

  apply(levels: Level[], side: Map<string, string>): void {
    for (const [price, size] of levels) {
      if (size === '0') side.delete(price);
      else side.set(price, size);
    }
  }

  /** Prices all have 8 decimal places, so comparing them as fixed-point integers is exact. */
  private sorted(side: Map<string, string>, descending: boolean): Level[] {
    const units = (price: string) => BigInt(price.replace('.', ''));
    return [...side].sort(([a], [b]) => {
      const diff = units(a) - units(b);
      const order = diff === 0n ? 0 : diff < 0n ? -1 : 1;
      return descending ? -order : order;
    });
  }

  checksum(): number {
    const bids = this.sorted(this.bids, true);
    const asks = this.sorted(this.asks, false);
    return referenceBookChecksum(bids, asks);
  }
}

let parsed: ParsedAsyncApi;
beforeAll(async () => {
  parsed = await parseAsyncApi();
});

describe('docs/protocol.md examples', () => {
  it('has JSON examples of requests and relay messages', () => {
    expect(examples.filter((e) => 'op' in e).length).toBeGreaterThanOrEqual(3);
    expect(examples.filter((e) => 'type' in e).length).toBeGreaterThanOrEqual(8);
    for (const example of examples) expect('op' in example || 'type' in example).toBe(true);
  });

  it('has requests that the relay request parser accepts unchanged', () => {
    for (const request of examples.filter((e) => 'op' in e)) {
      // As the relay reads a frame: a `rest` request's `paths` are its stream ids.
      const result = clientRequest.safeParse(withStreamIds(request));
      expect(result.success, `${JSON.stringify(request)}: ${result.error?.message}`).toBe(true);
      expect(result.data).toEqual(withStreamIds(request));
    }
  });

  it('has relay messages that match the AsyncAPI message schemas', () => {
    for (const message of examples.filter((e) => 'type' in e)) {
      const described = relayMessageFor(parsed.document, message);
      expect(described, `no AsyncAPI message for ${JSON.stringify(message)}`).toBeDefined();
      if (described === undefined) continue;
      const validate = compilePayload(described);
      expect(validate(message), `${JSON.stringify(message)}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it('has book messages that, read in order, are continuous and carry the right checksum', () => {
    const books = new Map<string, ClientBook>();
    const bookMessages = examples.filter(
      (e) => e.channel === 'book' && (e.type === 'snapshot' || e.type === 'update'),
    ) as unknown as BookMessage[];
    expect(bookMessages.map((m) => m.type)).toContain('update');
    // A paced subscription's conflated update applies to the state at its `prev_seq`, wherever in
    // the doc that state's messages are: checked once the ordinary messages are read.
    const conflated = bookMessages.filter((m) => m.prev_seq !== undefined);
    const states = new Map<string, ClientBook>();
    for (const message of bookMessages.filter((m) => m.prev_seq === undefined)) {
      const key = `${message.market}/${message.depth}`;
      let book = books.get(key);
      if (message.type === 'snapshot') {
        book = new ClientBook(message.epoch, message.seq);
        books.set(key, book);
      } else {
        expect(book, `update seq ${message.seq} before any snapshot of ${key}`).toBeDefined();
        if (book === undefined) continue;
        expect(message.epoch).toBe(book.epoch);
        expect(message.seq).toBe(book.seq + 1);
        book.seq = message.seq;
      }
      book.apply(message.data.bids, book.bids);
      book.apply(message.data.asks, book.asks);
      expect(message.checksum, `checksum of seq ${message.seq}`).toBe(book.checksum());
      states.set(`${key}/${message.epoch}/${message.seq}`, book.copy());
    }
    expect(conflated.length).toBeGreaterThan(0);
    for (const message of conflated) {
      const at = `${message.market}/${message.depth}/${message.epoch}/${message.prev_seq}`;
      const book = states.get(at)?.copy();
      expect(book, `the state ${at} a conflated update applies to`).toBeDefined();
      if (book === undefined) continue;
      expect(message.seq).toBeGreaterThan(message.prev_seq!);
      book.apply(message.data.bids, book.bids);
      book.apply(message.data.asks, book.asks);
      expect(message.checksum, `checksum of conflated seq ${message.seq}`).toBe(book.checksum());
    }
  });

  it('has compact examples that decode to JSON examples of the doc, numbered by its subscribed example', () => {
    expect(compactExamples.length).toBeGreaterThanOrEqual(3);
    const numbered = examples.find((e) => e.type === 'subscribed' && e.streams !== undefined)!;
    const book = Object.entries(numbered.streams as Record<string, number>)[0]!;
    const lookup = new Map<number, CompactStreamIdentity>([
      [book[1], { channel: 'book', market: book[0], depth: numbered.depth as 10 }],
      [4, { channel: 'price', market: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d' }],
    ]);
    for (const compact of compactExamples) {
      const decoded = decodeCompactStreamMessage(compact, lookup);
      expect(decoded.ok, JSON.stringify(compact)).toBe(true);
      if (decoded.ok) expect(examples).toContainEqual(decoded.message);
    }
  });

  it('gives a worked checksum example whose number is the CRC-32 of its input string', () => {
    const worked = /```text\n(.*)\n```\n\nand its CRC-32 is \*\*(\d+)\*\*/.exec(doc);
    expect(worked).not.toBeNull();
    const [, input = '', checksum = ''] = worked ?? [];
    expect(crc32(input)).toBe(Number(checksum));
    expect(doc).toContain(`"checksum":${checksum}`);
  });
});
