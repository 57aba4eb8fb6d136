/**
 * The walk measure's pure part (bench/lib/walk-files.ts, bench/walk-coverage.ts): a compiled file is
 * named by its source through its source map, only the project's sources count, a file counts when
 * a function of it was called, and the folders are the files' directories.
 */
import { describe, expect, it } from 'vitest';
import {
  called,
  callsByFunction,
  entered,
  filesThatRan,
  foldersOf,
  projectSourceOf,
  type ScriptCoverage,
  type SourceMapFields,
} from '../../bench/lib/walk-files.ts';

const ROOT = '/repo';

/** The source maps `tsc` writes beside dist/'s files, by compiled file. */
const maps: Record<string, SourceMapFields> = {
  '/repo/dist/src/relay/streams/stream.js': {
    sourceRoot: '',
    sources: ['../../../../src/relay/streams/stream.ts'],
  },
  '/repo/dist/packages/protocol/src/protocol/book.js': {
    sources: ['../../../../../packages/protocol/src/protocol/book.ts'],
  },
  '/repo/dist/src/http/assets/client.js': { sources: ['../../../../packages/client/src/index.ts'] },
};
const readMap = (file: string) => maps[file];

function script(url: string, counts: readonly (readonly number[])[]): ScriptCoverage {
  return {
    url,
    functions: counts.map((ranges, index) => ({
      functionName: `f${index}`,
      ranges: ranges.map((count, at) => ({ startOffset: at, endOffset: 100 - at, count })),
    })),
  };
}

describe('projectSourceOf', () => {
  it('names a compiled file by the source its map points at', () => {
    expect(projectSourceOf(ROOT, 'file:///repo/dist/src/relay/streams/stream.js', readMap)).toBe(
      'src/relay/streams/stream.ts',
    );
    expect(projectSourceOf(ROOT, 'file:///repo/dist/packages/protocol/src/protocol/book.js', readMap)).toBe(
      'packages/protocol/src/protocol/book.ts',
    );
  });

  it('takes a file without a map as its own source (the sources run through tsx)', () => {
    expect(projectSourceOf(ROOT, 'file:///repo/src/ws/endpoint.ts', readMap)).toBe('src/ws/endpoint.ts');
  });

  it('leaves out what is not the project’s sources: dependencies, Node’s own, a compiled file without a map', () => {
    expect(projectSourceOf(ROOT, 'file:///repo/node_modules/ws/lib/sender.js', readMap)).toBeUndefined();
    expect(projectSourceOf(ROOT, 'node:internal/timers', readMap)).toBeUndefined();
    expect(projectSourceOf(ROOT, '', readMap)).toBeUndefined();
    expect(projectSourceOf(ROOT, 'file:///repo/dist/src/cli.js', readMap)).toBeUndefined();
    expect(projectSourceOf(ROOT, 'file:///elsewhere/src/x.ts', readMap)).toBeUndefined();
  });

  it('reads a path with an escaped character', () => {
    expect(projectSourceOf('/my repo', 'file:///my%20repo/src/a.ts', () => undefined)).toBe('src/a.ts');
  });
});

describe('filesThatRan', () => {
  const sourceOf = (url: string) => projectSourceOf(ROOT, url, readMap);

  it('counts a file in which a function was called, once, sorted', () => {
    const scripts = [
      script('file:///repo/src/b.ts', [[0], [2]]),
      script('file:///repo/src/a.ts', [[1, 0]]),
      script('file:///repo/dist/src/relay/streams/stream.js', [[3]]),
      script('file:///repo/src/relay/streams/stream.ts', [[1]]),
      script('file:///repo/src/idle.ts', [[0], [0, 0]]),
      script('file:///repo/node_modules/ws/lib/sender.js', [[9]]),
    ];
    expect(filesThatRan(scripts, sourceOf)).toEqual(['src/a.ts', 'src/b.ts', 'src/relay/streams/stream.ts']);
  });

  it('tells a call from a block entered without one (an async function resumed)', () => {
    const resumed = script('file:///repo/src/loop.ts', [[0, 4]]);
    expect(called(resumed)).toBe(false);
    expect(entered(resumed)).toBe(true);
    expect(filesThatRan([resumed], sourceOf)).toEqual([]);
    expect(filesThatRan([resumed], sourceOf, entered)).toEqual(['src/loop.ts']);
  });
});

describe('foldersOf', () => {
  it('is each file’s directory with how many files sit in it, sorted; src/*.ts is `src`', () => {
    const folders = foldersOf([
      'src/relay/streams/stream.ts',
      'src/relay-server.ts',
      'packages/protocol/src/protocol/book.ts',
      'src/relay/streams/frame.ts',
      'src/relay/channels/book/target/book-target.ts',
    ]);
    expect([...folders]).toEqual([
      ['packages/protocol/src/protocol', 1],
      ['src', 1],
      ['src/relay/channels/book/target', 1],
      ['src/relay/streams', 2],
    ]);
  });
});

describe('callsByFunction', () => {
  it('names each called function by its source file, most called first, an unnamed one `(anonymous)`', () => {
    const scripts: ScriptCoverage[] = [
      {
        url: 'file:///repo/src/a.ts',
        functions: [
          { functionName: 'once', ranges: [{ startOffset: 0, endOffset: 9, count: 1 }] },
          { functionName: '', ranges: [{ startOffset: 10, endOffset: 19, count: 8 }] },
          { functionName: 'never', ranges: [{ startOffset: 20, endOffset: 29, count: 0 }] },
        ],
      },
      {
        url: 'file:///repo/node_modules/x.js',
        functions: [{ functionName: 'f', ranges: [{ startOffset: 0, endOffset: 1, count: 5 }] }],
      },
    ];
    expect(callsByFunction(scripts, (url) => projectSourceOf(ROOT, url, readMap))).toEqual([
      { fn: 'src/a.ts:(anonymous)', calls: 8 },
      { fn: 'src/a.ts:once', calls: 1 },
    ]);
  });
});
