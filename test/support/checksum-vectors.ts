/**
 * @module test/support/checksum-vectors
 * The book checksum test vectors (clients/vectors/checksum-v1.json, docs/protocol.md "Checksum test
 * vectors"): book streams as the relay sends them, each message with the book after it and that
 * book's checksum, computed here by the reference implementation (protocol/book.ts). Most cases
 * are made the way the relay makes a stream (full books, cut to the stream's depth, diffed by
 * src/relay/channels/book/codec.ts); a few are hand-written updates the relay would not send but a client must
 * apply as the protocol says (changes out of order, a price changed twice, a removal of an absent level).
 * The grouped cases (docs/protocol.md "Grouped books") are streams of a `group` step: each step also
 * carries the upstream levels it was summed from (`grouped_from`), so a client can check the rule too.
 *
 * Run directly (`npm run vectors`) to write the file; test/protocol/checksum-vectors.test.ts keeps
 * the file and this generator in step.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  applyBookUpdate,
  type BookState,
  bookChecksum,
  bookChecksumInput,
} from '../../packages/protocol/src/protocol/book.ts';
import { sumDecimals } from '../../packages/protocol/src/protocol/decimal.ts';
import { groupBook } from '../../packages/protocol/src/protocol/group.ts';
import type { BookData, BookDepth, Level } from '../../packages/protocol/src/protocol/messages.ts';
import { diffBook, limitDepth } from '../../src/relay/channels/book/codec.ts';

export const CHECKSUM_VECTORS_FILE = fileURLToPath(
  new URL('../../clients/vectors/checksum-v1.json', import.meta.url),
);

export interface VectorStep {
  type: 'snapshot' | 'update';
  /** The message's `data`, as the relay sends it. */
  data: BookData;
  /** The message's `checksum`: of the book after the message is applied. */
  checksum: number;
  /** The checksum's input string, for a client that wants to see where it went wrong. */
  input: string;
  /** The whole book after the message is applied (beyond the 25 levels the checksum covers). */
  book: BookState;
  /** A grouped case: upstream's levels (every one, ungrouped) that `book` was summed from. */
  grouped_from?: BookState;
}

export interface VectorCase {
  name: string;
  description: string;
  /** The stream's depth (1, 5, 10, 25, 50, null = full book): informational, the steps are already cut to it. */
  depth: BookDepth;
  /** A grouped book's step: `book` is `grouped_from` summed into multiples of it, then cut to `depth`. */
  group?: string;
  steps: VectorStep[];
}

export interface ChecksumVectors {
  version: 1;
  description: string;
  cases: VectorCase[];
}

/** Builds a case's steps by applying each message with the reference code. */
function steps(messages: readonly BookData[]): VectorStep[] {
  let book: BookState = { bids: [], asks: [] };
  return messages.map((data, index) => {
    book = index === 0 ? applyBookUpdate({ bids: [], asks: [] }, data) : applyBookUpdate(book, data);
    return {
      type: index === 0 ? 'snapshot' : 'update',
      data,
      checksum: bookChecksum(book),
      input: bookChecksumInput(book),
      book,
    };
  });
}

/** A stream as the relay makes it from successive full books: cut to `depth`, then diffed. */
function relayCase(
  name: string,
  description: string,
  depth: BookDepth,
  books: readonly BookState[],
): VectorCase {
  const shown = books.map((book) => limitDepth(book, depth));
  const messages: BookData[] = [shown[0]!];
  for (let i = 1; i < shown.length; i++) {
    const update = diffBook(shown[i - 1]!, shown[i]!);
    if (update === null) throw new Error(`${name}: book ${i} changes nothing`);
    messages.push(update);
  }
  return { name, description, depth, steps: steps(messages) };
}

/** A grouped stream as the relay makes it from successive full books: grouped, cut to `depth`, diffed. */
function groupedCase(
  name: string,
  description: string,
  depth: BookDepth,
  group: string,
  books: readonly BookState[],
): VectorCase {
  const relay = relayCase(
    name,
    description,
    depth,
    books.map((book) => groupBook(book, group)),
  );
  const steps = relay.steps.map((step, i) => ({ ...step, grouped_from: books[i]! }));
  return { name, description, depth, group, steps };
}

function handCase(name: string, description: string, messages: readonly BookData[]): VectorCase {
  return { name, description, depth: null, steps: steps(messages) };
}

/**
 * `count` levels from price `start` moving by `step`, both in units of 0.0001 (integers, so that no
 * price passes through a binary float), with sizes `size(i)`.
 */
function ladder(count: number, start: number, step: number, size: (i: number) => string): Level[] {
  return Array.from({ length: count }, (_, i): Level => [priceText(start + i * step), size(i)]);
}

/** A price in units of 0.0001 as upstream prints it: 8 decimal places. */
function priceText(units: number): string {
  return `${Math.floor(units / 10_000)}.${String(units % 10_000).padStart(4, '0')}0000`;
}

const bids30 = ladder(30, 6000, -100, (i) => String(10 + i));
const asks28 = ladder(28, 6100, 100, (i) => `${5 + i}.5`);
const bids15 = ladder(15, 5000, -100, (i) => String(100 + i));
const asks15 = ladder(15, 5100, 100, (i) => String(200 + i));
/** A book quoted in 0.001 around 0.55: 0.5000 and 0.5500 sit on a 0.05 boundary, sizes of several places. */
const fineBids = ladder(14, 5490, -40, (i) => (i % 3 === 0 ? `${i + 1}.25` : String(i + 1)));
const fineAsks = ladder(14, 5500, 30, (i) => (i % 4 === 1 ? `0.${i}05` : String(10 - (i % 5))));

export function checksumVectors(): ChecksumVectors {
  return {
    version: 1,
    description:
      'Book checksum test vectors of market-relay protocol version 1 (docs/protocol.md "Checksum"). Each case is ' +
      'one book stream: apply its steps in order (a snapshot replaces the book, an update changes levels, size "0" ' +
      'removes one) and after each compare your book with `book`, your checksum input with `input` and your ' +
      'checksum with `checksum`.',
    cases: [
      handCase(
        'empty-book',
        'An empty book has the empty input and checksum 0, also after its last level leaves.',
        [
          { bids: [], asks: [] },
          { bids: [['0.40000000', '5']], asks: [] },
          { bids: [['0.40000000', '0']], asks: [] },
        ],
      ),
      handCase('protocol-guide', 'The snapshot and updates of docs/protocol.md, seq 41 to 44.', [
        {
          bids: [
            ['0.52000000', '150'],
            ['0.51000000', '20.5'],
          ],
          asks: [
            ['0.53000000', '75.25'],
            ['0.54000000', '10'],
          ],
          last_price: '0.52000000',
        },
        {
          bids: [
            ['0.51000000', '0'],
            ['0.50000000', '12'],
          ],
          asks: [],
          last_price: '0.53000000',
        },
        { bids: [], asks: [['0.53000000', '60.25']] },
        { bids: [['0.52000000', '162.5']], asks: [] },
      ]),
      handCase('one-sided', 'Only bids, then only asks: the input holds the side that exists.', [
        { bids: ladder(3, 4500, -100, () => '7'), asks: [] },
        {
          bids: [
            ['0.45000000', '0'],
            ['0.44000000', '0'],
            ['0.43000000', '0'],
          ],
          asks: ladder(2, 5500, 100, () => '3.25'),
        },
      ]),
      relayCase(
        'uneven-sides',
        'Three bids and seven asks: past the third level the input goes on with asks alone.',
        null,
        [
          {
            bids: ladder(3, 4000, -100, (i) => String(i + 1)),
            asks: ladder(7, 4100, 100, (i) => String(i + 1)),
          },
          {
            bids: ladder(3, 4000, -100, (i) => String(i + 1)),
            asks: ladder(6, 4200, 100, (i) => String(i + 2)),
          },
        ],
      ),
      relayCase(
        'beyond-25-levels',
        'A full book of 30 bids and 28 asks: the checksum covers the best 25 per side, so a change at the 27th ' +
          'bid leaves it unchanged, and removing the best bid brings the 26th into it.',
        null,
        [
          { bids: bids30, asks: asks28, last_price: '0.60000000' },
          {
            bids: bids30.map((level, i) => (i === 26 ? [level[0], '999'] : level)),
            asks: asks28,
            last_price: '0.60000000',
          },
          {
            bids: bids30.slice(1).map((level, i) => (i === 25 ? [level[0], '999'] : level)),
            asks: asks28,
            last_price: '0.60000000',
          },
        ],
      ),
      relayCase(
        'depth-10-window',
        'A depth-10 stream of a 15-level book: a better bid pushes the tenth out of the window (it comes as size ' +
          '"0" though it still exists upstream); an ask removed lets the eleventh in with its size.',
        10,
        [
          { bids: bids15, asks: asks15, last_price: '0.50000000' },
          {
            bids: [['0.51000000', '1'], ...bids15],
            asks: [asks15[0]!, ...asks15.slice(2)],
            last_price: '0.51000000',
          },
        ],
      ),
      relayCase(
        'depth-1-window',
        'A depth-1 stream (top of book): a better bid replaces the best (the old best comes as size "0" though it ' +
          'still exists upstream), and removing the best ask brings the second in with its size.',
        1,
        [
          { bids: bids15, asks: asks15, last_price: '0.50000000' },
          { bids: [['0.51000000', '1'], ...bids15], asks: asks15.slice(1), last_price: '0.51000000' },
        ],
      ),
      relayCase(
        'depth-50-window',
        'A depth-50 stream: 60 levels per side upstream, 50 shown; the checksum still covers 25.',
        50,
        [
          { bids: ladder(60, 9000, -100, () => '1'), asks: ladder(60, 9100, 50, () => '2') },
          { bids: ladder(60, 9000, -100, () => '1').slice(3), asks: ladder(60, 9100, 50, () => '2') },
        ],
      ),
      relayCase(
        'size-text',
        'Sizes are text: a level summing orders of "2" and "1.50" is "3.50"; when the 1.50 order becomes 1.5 the ' +
          'value stays and the text becomes "3.5", which the relay sends and the checksum sees. "0.10" is not "0.1".',
        null,
        [
          {
            bids: [['0.30000000', sumDecimals(['2', '1.50'])]],
            asks: [['0.31000000', sumDecimals(['0.05', '0.05'])]],
          },
          {
            bids: [['0.30000000', sumDecimals(['2', '1.5'])]],
            asks: [['0.31000000', sumDecimals(['0.05', '0.050'])]],
          },
          {
            bids: [['0.30000000', sumDecimals(['2', '1.5'])]],
            asks: [['0.31000000', '0.1']],
          },
        ],
      ),
      relayCase(
        'last-price-only',
        'An update that only moves last_price: the book and its checksum stay (last_price is not in the input).',
        null,
        [
          { bids: [['0.20000000', '1']], asks: [['0.21000000', '1']], last_price: '0.20000000' },
          { bids: [['0.20000000', '1']], asks: [['0.21000000', '1']], last_price: '0.21000000' },
        ],
      ),
      groupedCase(
        'group-0.05-full',
        'Levels quoted in 0.001 summed into 0.05 steps: bids rounded down (0.549 joins 0.50, 0.500 stays), asks ' +
          'rounded up (0.551 joins 0.60, 0.550 stays), so no group shows a better price than exists; sizes are ' +
          'exact sums printed with the most places of any level in them. Then a bid moves across a boundary.',
        null,
        '0.05',
        [
          { bids: fineBids, asks: fineAsks, last_price: '0.54900000' },
          {
            bids: fineBids.map((level, i) => (i === 0 ? ['0.55000000', level[1]] : level)),
            asks: fineAsks.slice(1),
            last_price: '0.55000000',
          },
        ],
      ),
      groupedCase(
        'group-0.01-depth-5',
        'A depth-5 stream of a book summed into 0.01 steps: depth counts grouped levels, so five groups a side; ' +
          'when the best bid group empties, the sixth group enters the window.',
        5,
        '0.01',
        [
          { bids: fineBids, asks: fineAsks, last_price: '0.54900000' },
          {
            bids: fineBids.filter(([price]) => !price.startsWith('0.54')),
            asks: fineAsks,
            last_price: '0.54900000',
          },
        ],
      ),
      handCase(
        'numeric-price-order',
        'Prices ordered as decimals, not as text: 9.75 sits between 10 and 9.5 on the bid side, 11 after 10.75 ' +
          'and before 100 on the ask side.',
        [
          {
            bids: [
              ['10.00000000', '1'],
              ['9.50000000', '2'],
            ],
            asks: [
              ['10.50000000', '3'],
              ['11.00000000', '4'],
              ['100.00000000', '5'],
            ],
          },
          { bids: [['9.75000000', '6']], asks: [['10.75000000', '7']] },
        ],
      ),
      handCase(
        'changes-in-any-order',
        'An update whose levels are not best first, that changes one price twice (the last change wins) and ' +
          'removes a level the book does not have (nothing happens).',
        [
          { bids: ladder(4, 7000, -100, () => '10'), asks: ladder(4, 7100, 100, () => '10') },
          {
            bids: [
              ['0.67000000', '0'],
              ['0.72000000', '4'],
              ['0.69000000', '8'],
              ['0.69000000', '9.5'],
              ['0.55000000', '0'],
            ],
            asks: [
              ['0.74000000', '1'],
              ['0.71000000', '0'],
              ['0.70500000', '2'],
            ],
          },
        ],
      ),
    ],
  };
}

/** The file's text: two-space JSON with each `[price, size]` level on one line. */
export function checksumVectorsText(vectors: ChecksumVectors = checksumVectors()): string {
  const json = JSON.stringify(vectors, null, 2);
  return `${json.replace(/\[\n\s+("[^"\n]*"),\n\s+("[^"\n]*")\n\s+\]/g, '[$1, $2]')}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(CHECKSUM_VECTORS_FILE, checksumVectorsText());
  console.log(`wrote ${CHECKSUM_VECTORS_FILE}`);
}
