/**
 * @module test/docs/sdk-vocabulary.test
 * The two SDKs speak one vocabulary: the side-by-side table of docs/client.md "One vocabulary" is
 * the same in clients/python/README.md, and each name it gives exists where it says. JavaScript:
 * bare names among the exports of the SDK's entry (values and types, read with the TypeScript
 * compiler), `client.…`, `stream.…` and the like on live objects of the source SDK. Python: the
 * same, by introspection in a subprocess. A member's Python name is the JavaScript one in
 * snake_case, but where the table's Python idiom differs (IDIOMS).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { connect, RelayClientError } from '../../packages/client/src/node.ts';
import { pythonAvailable, SYSTEM_PYTHON } from '../support/clients/python-client.ts';

const run = promisify(execFile);
const clientGuide = readFileSync(new URL('../../docs/client.md', import.meta.url), 'utf8');
const pythonReadme = readFileSync(new URL('../../clients/python/README.md', import.meta.url), 'utf8');
const sdkEntry = new URL('../../packages/client/src/index.ts', import.meta.url).pathname;
const pythonSource = new URL('../../clients/python/src', import.meta.url).pathname;

/** Where Python's idiom names a member otherwise than snake_case of the JavaScript name. */
const IDIOMS: Readonly<Record<string, string>> = {
  isClosed: 'closed', // as Python's files and sockets say it
};

interface Name {
  /** `client`, `stream` ... or undefined for a name the package exports. */
  object: string | undefined;
  member: string;
}
interface Row {
  what: string;
  javascript: Name | undefined;
  python: Name | undefined;
}

/** The text of the first table under the heading `heading`, from its header line to its last row. */
function vocabularyTable(doc: string, heading: RegExp): string {
  const start = doc.search(heading);
  const lines = doc.slice(Math.max(start, 0)).split('\n');
  const first = lines.findIndex((line) => line.startsWith('| what | JavaScript | Python |'));
  if (start === -1 || first === -1) throw new Error(`no vocabulary table under ${heading}`);
  const rows: string[] = [];
  for (const line of lines.slice(first)) {
    if (!line.startsWith('|')) break;
    rows.push(line);
  }
  return rows.join('\n');
}

function nameOf(cell: string): Name | undefined {
  if (cell === '—') return undefined;
  const match = /^`(?:(\w+)\.)?(\w+)(?:\(\))?`$/.exec(cell);
  if (match === null) throw new Error(`not a name: ${cell}`);
  return { object: match[1], member: match[2]! };
}

function rowsOf(table: string): Row[] {
  return table
    .split('\n')
    .slice(2)
    .map((line) => {
      const [what, javascript, python] = line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim());
      return { what: what ?? '', javascript: nameOf(javascript ?? ''), python: nameOf(python ?? '') };
    });
}

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/**
 * Every name the SDK's entry exports, types included. Only the module graph is read: without the
 * standard library's declarations (`noLib`), in a second rather than ten.
 */
function javascriptExports(): Set<string> {
  const program = ts.createProgram([sdkEntry], {
    allowImportingTsExtensions: true,
    noEmit: true,
    noLib: true,
    types: [],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
  });
  const checker = program.getTypeChecker();
  const entry = checker.getSymbolAtLocation(program.getSourceFile(sdkEntry)!)!;
  return new Set(checker.getExportsOfModule(entry).map((symbol) => symbol.getName()));
}

const MARKET = '3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f';

/** Which table names JavaScript lacks: members checked on live objects of a client that never connects. */
async function missingInJavascript(names: readonly Name[], exported: Set<string>): Promise<string[]> {
  // Port 9 (discard) on the loopback: nothing answers, the client keeps retrying until closed.
  const client = connect('ws://127.0.0.1:9/v1/ws', { reportUnreachableAfter: 1_000 });
  client.on('error', () => undefined);
  try {
    const objects: Record<string, object> = {
      client,
      stream: client.subscribePrice(MARKET),
      book: client.subscribeBook(MARKET, { depth: 10 }),
      price: client.subscribePrice(MARKET),
      trades: client.subscribeTrades(MARKET),
      rest: client.subscribeRest('/api/markets'),
      candles: client.subscribeCandles(MARKET, { interval: '1m', source: 'probability' }),
      wildcard: client.subscribeAll('price'),
      replay: client.replay({ channel: 'book', markets: [MARKET], from: '2026-03-02T14:00:00Z' }),
      error: new RelayClientError('bad_request', 'a test'),
    };
    return names
      .filter(({ object, member }) =>
        object === undefined ? !exported.has(member) : !(member in (objects[object] ?? {})),
      )
      .map(({ object, member }) => (object === undefined ? member : `${object}.${member}`));
  } finally {
    await client.close();
  }
}

/** The same in Python: a script builds the same objects and prints the names it lacks. */
const PYTHON_CHECK = `
import asyncio, json, sys
import market_relay
from market_relay import RelayClientError, connect

MARKET = "${MARKET}"

async def main():
    names = json.loads(sys.argv[1])
    client = connect("ws://127.0.0.1:9/v1/ws")
    objects = {
        "client": client,
        "stream": client.subscribe_price(MARKET),
        "book": client.subscribe_book(MARKET, depth=10),
        "price": client.subscribe_price(MARKET),
        "trades": client.subscribe_trades(MARKET),
        "rest": client.subscribe_rest("/api/markets"),
        "candles": client.subscribe_candles(MARKET, "1m", "probability"),
        "wildcard": client.subscribe_all("price"),
        "replay": client.replay("book", [MARKET], "2026-03-02T14:00:00Z"),
        "error": RelayClientError("bad_request", "a test"),
    }
    missing = []
    for obj, member in names:
        if obj is None:
            found = member in market_relay.__all__ and hasattr(market_relay, member)
        else:
            found = obj in objects and hasattr(objects[obj], member)
        if not found:
            missing.append(member if obj is None else f"{obj}.{member}")
    await client.close()
    print(json.dumps(missing))

asyncio.run(main())
`;

async function missingInPython(names: readonly Name[]): Promise<string[]> {
  const { stdout } = await run(
    SYSTEM_PYTHON,
    ['-c', PYTHON_CHECK, JSON.stringify(names.map(({ object, member }) => [object ?? null, member]))],
    { env: { ...process.env, PYTHONPATH: pythonSource, PYTHONDONTWRITEBYTECODE: '1' } },
  );
  return JSON.parse(stdout) as string[];
}

const withPython = await pythonAvailable();

describe('one vocabulary in both SDKs', () => {
  const table = vocabularyTable(clientGuide, /^## One vocabulary/m);
  const rows = rowsOf(table);

  it('is one table, the same in docs/client.md and the Python README', () => {
    expect(rows.length).toBeGreaterThan(50);
    expect(vocabularyTable(pythonReadme, /^## One vocabulary/m)).toBe(table);
  });

  it('names a member in Python as in JavaScript, in snake_case or by a listed idiom', () => {
    const differing = rows
      .filter((row) => row.javascript !== undefined && row.python !== undefined)
      .filter(({ javascript, python }) => {
        const expected =
          javascript!.object === undefined
            ? javascript!.member
            : (IDIOMS[javascript!.member] ?? snakeCase(javascript!.member));
        return python!.object !== javascript!.object || python!.member !== expected;
      });
    expect(differing).toEqual([]);
  });

  it('gives JavaScript names the SDK has', async () => {
    const names = rows.flatMap(({ javascript }) => (javascript === undefined ? [] : [javascript]));
    const exported = javascriptExports();
    expect(await missingInJavascript(names, exported)).toEqual([]);
    // The check can fail: a name the SDK does not have is reported.
    expect(
      await missingInJavascript(
        [
          { object: 'client', member: 'subscribe_book' },
          { object: undefined, member: 'NoSuchType' },
        ],
        exported,
      ),
    ).toEqual(['client.subscribe_book', 'NoSuchType']);
  });

  it.skipIf(!withPython)('gives Python names the package has', async () => {
    const names = rows.flatMap(({ python }) => (python === undefined ? [] : [python]));
    expect(await missingInPython(names)).toEqual([]);
    expect(
      await missingInPython([
        { object: 'client', member: 'subscribeBook' },
        { object: undefined, member: 'NoSuchType' },
      ]),
    ).toEqual(['client.subscribeBook', 'NoSuchType']);
  });
});
