/**
 * @module test/support/wire-package-rules
 * The rules that keep packages/protocol the wire only (packages/protocol/README.md): what a client
 * and the relay must agree on, compiled into both. Its sources import no Node built-in, none of the
 * server's packages and no package the wire package does not declare; no file of it is the server's
 * alone (named `relay…`, or reached from no client module); and its folders import each other in
 * one direction only, no circle. The checks are pure over a graph read from the sources, so each
 * rule is tested on a graph that breaks it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import ts from 'typescript';
import { cycles, type ImportGraph } from './import-rules.ts';

/** Packages only a server has a use for: a file of the wire package importing one is the server's. */
export const serverPackages: readonly string[] = ['ioredis', 'undici', 'pino', 'ws'];

/** The wire package as the rules read it. Modules are named by their path under src/, without extension. */
export interface WirePackage {
  /** Every module of the package -> the modules of the package it imports. */
  graph: ImportGraph;
  /** Every module of the package -> the packages and built-ins it imports (bare specifiers). */
  bare: ReadonlyMap<string, readonly string[]>;
  /** The modules of the package some client module imports itself. */
  clientImports: ReadonlySet<string>;
  /** The packages the wire package declares (its package.json `dependencies`). */
  dependencies: readonly string[];
}

/** Reads the wire package's sources (`dir`) and which of its modules the client's sources import. */
export function readWirePackage(
  dir: string,
  clientDir: string,
  dependencies: readonly string[],
): WirePackage {
  const graph = new Map<string, string[]>();
  const bare = new Map<string, string[]>();
  const clientImports = new Set<string>();
  const inPackage = (file: string) => !path.relative(dir, file).startsWith('..');
  const moduleOf = (file: string) =>
    path
      .relative(dir, file)
      .split(path.sep)
      .join('/')
      .replace(/\.(ts|js)$/, '');
  for (const file of sourceFiles(dir)) {
    const { relative, packages } = importsOf(file);
    graph.set(moduleOf(file), relative.filter(inPackage).map(moduleOf));
    bare.set(moduleOf(file), packages);
  }
  for (const file of sourceFiles(clientDir))
    for (const target of importsOf(file).relative) if (inPackage(target)) clientImports.add(moduleOf(target));
  return { graph, bare, clientImports, dependencies };
}

/**
 * Every broken rule, one line each; empty when the package is the wire only. `serverRead` names the
 * modules the relay reads and no client module needs to (the request schemas it validates a
 * client's frames with: the request types they produce are the client's, in protocol/messages.ts).
 */
export function wirePackageViolations(wire: WirePackage, serverRead: readonly string[] = []): string[] {
  const violations: string[] = [];
  const reached = reachable(wire.graph, [...wire.clientImports]);
  for (const [module, specifiers] of wire.bare) {
    for (const specifier of specifiers) {
      const name = packageName(specifier);
      if (specifier.startsWith('node:') || isBuiltin(specifier))
        violations.push(`${module} imports ${specifier}: a Node built-in`);
      else if (serverPackages.includes(name))
        violations.push(`${module} imports ${specifier}: a server package`);
      else if (!wire.dependencies.includes(name))
        violations.push(`${module} imports ${specifier}: not a dependency of the wire package`);
    }
  }
  for (const module of wire.graph.keys()) {
    if ((module.split('/').at(-1) as string).startsWith('relay'))
      violations.push(`${module}: a server-only file (named relay…) in the wire package`);
    else if (!reached.has(module) && !serverRead.includes(module))
      violations.push(`${module}: no client module imports it, so it is the server's alone`);
  }
  for (const cycle of cycles(folderGraph(wire.graph)))
    violations.push(`folder circle: ${cycle.join(' -> ')}`);
  return violations;
}

/** The folders of the package (a module's first path segment, `.` for a file at the top) and which import which. */
export function folderGraph(graph: ImportGraph): ImportGraph {
  const folderOf = (module: string) => (module.includes('/') ? (module.split('/')[0] as string) : '.');
  const folders = new Map<string, Set<string>>();
  for (const [module, targets] of graph) {
    const from = folderOf(module);
    const edges = folders.get(from) ?? new Set<string>();
    folders.set(from, edges);
    for (const target of targets) if (folderOf(target) !== from) edges.add(folderOf(target));
  }
  return new Map([...folders].map(([folder, edges]) => [folder, [...edges]]));
}

function reachable(graph: ImportGraph, roots: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const pending = [...roots];
  for (let module = pending.pop(); module !== undefined; module = pending.pop()) {
    if (seen.has(module)) continue;
    seen.add(module);
    pending.push(...(graph.get(module) ?? []));
  }
  return seen;
}

/** `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/** A file's imports (static, type-only, re-exports, dynamic `import()`): relative ones resolved, bare ones as written. */
function importsOf(file: string): { relative: string[]; packages: string[] } {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const specifiers = [...new Set(importedFiles.map((entry) => entry.fileName))];
  return {
    relative: specifiers
      .filter((name) => name.startsWith('.'))
      .map((name) => path.resolve(path.dirname(file), name)),
    packages: specifiers.filter((name) => !name.startsWith('.')),
  };
}
