/**
 * @module bench/lib/walk-files
 * The pure part of bench/walk-coverage.ts: which project source files a V8 precise-coverage result
 * says ran, and the folders they sit in. A compiled file is named by the source its source map
 * points at, so the lists read in the sources' paths whatever the build lays out in dist/.
 */
import path from 'node:path';

/** One function of `Profiler.takePreciseCoverage` (the Chrome DevTools Protocol's FunctionCoverage). */
export interface FunctionCoverage {
  functionName: string;
  ranges: readonly { startOffset: number; endOffset: number; count: number }[];
}

/** One script of `Profiler.takePreciseCoverage` (ScriptCoverage). */
export interface ScriptCoverage {
  url: string;
  functions: readonly FunctionCoverage[];
}

/** What a source map says of its file: only the fields the mapping reads. */
export interface SourceMapFields {
  sourceRoot?: string;
  sources: readonly string[];
}

/** The project's source trees: a file outside them (node_modules, Node's own, dist alone) is not counted. */
const SOURCE_TREES = [/^src\//, /^packages\/[^/]+\/src\//];

/**
 * The source file (relative to `root`, `/`-separated) that compiled `scriptUrl`, or undefined when
 * it is none of the project's sources. `readMap` gives the script's source map (its `.map` beside
 * it) or undefined when it has none; without one a file is taken as its own source.
 */
export function projectSourceOf(
  root: string,
  scriptUrl: string,
  readMap: (file: string) => SourceMapFields | undefined,
): string | undefined {
  if (!scriptUrl.startsWith('file://')) return undefined;
  const file = decodeURIComponent(new URL(scriptUrl).pathname);
  const map = readMap(file);
  const first = map?.sources[0];
  const source = first === undefined ? file : path.resolve(path.dirname(file), map?.sourceRoot ?? '', first);
  const relative = path.relative(root, source).split(path.sep).join('/');
  return SOURCE_TREES.some((tree) => tree.test(relative)) ? relative : undefined;
}

/**
 * Whether a function of the script was called since the counters were last reset: its first range
 * (the whole function) counts its calls. The issue's measure.
 */
export function called(script: ScriptCoverage): boolean {
  return script.functions.some((fn) => (fn.ranges[0]?.count ?? 0) > 0);
}

/**
 * Whether any code of the script ran since the reset: a call, or a block of a function entered
 * without one (an async function resumed after an `await` counts no new call, only its blocks').
 */
export function entered(script: ScriptCoverage): boolean {
  return script.functions.some((fn) => fn.ranges.some((range) => range.count > 0));
}

/** The project's source files for which `ran` holds, sorted. */
export function filesThatRan(
  scripts: readonly ScriptCoverage[],
  sourceOf: (scriptUrl: string) => string | undefined,
  ran: (script: ScriptCoverage) => boolean = called,
): string[] {
  const files = new Set<string>();
  for (const script of scripts) {
    if (!ran(script)) continue;
    const source = sourceOf(script.url);
    if (source !== undefined) files.add(source);
  }
  return [...files].sort();
}

/** Each file's folder (its directory: `src` for src/*.ts), with how many of the files sit in it, sorted. */
export function foldersOf(files: readonly string[]): Map<string, number> {
  const folders = new Map<string, number>();
  for (const file of files) {
    const folder = path.posix.dirname(file);
    folders.set(folder, (folders.get(folder) ?? 0) + 1);
  }
  return new Map([...folders].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/**
 * Each called function as `file:name` with its calls in the window, most called first: which of
 * them run once per poll or per message is where the walk goes. An unnamed function is `(anonymous)`.
 */
export function callsByFunction(
  scripts: readonly ScriptCoverage[],
  sourceOf: (scriptUrl: string) => string | undefined,
): { fn: string; calls: number }[] {
  const calls = new Map<string, number>();
  for (const script of scripts) {
    const source = sourceOf(script.url);
    if (source === undefined) continue;
    for (const fn of script.functions) {
      const count = fn.ranges[0]?.count ?? 0;
      if (count === 0) continue;
      const name = `${source}:${fn.functionName || '(anonymous)'}`;
      calls.set(name, (calls.get(name) ?? 0) + count);
    }
  }
  return [...calls]
    .map(([fn, count]) => ({ fn, calls: count }))
    .sort((a, b) => b.calls - a.calls || (a.fn < b.fn ? -1 : 1));
}
