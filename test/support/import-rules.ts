/**
 * The import rules of src/ (README "Architecture"), checked over the import graph TypeScript reads
 * from the sources (`ts.preProcessFile`: static imports, re-exports and dynamic `import()`).
 *
 * Each top-level folder of src/ is a layer with a rank; a module may import its own layer or any
 * layer of a lower rank, never a higher one, and never a layer of the same rank (siblings stay
 * independent). Files directly in src/ form the `app` layer, which wires everything together.
 * A layer may be divided into rooms (its subfolders, `roomRanks`), ranked the same way inside it: a
 * module may import its own room or a room of a lower rank of its layer, never a higher one nor a
 * sibling room of the same rank. Files directly in such a layer form its room `.`.
 * On top of that, no module may reach itself through its imports: no cycles at all.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** Layer -> rank; lower ranks are further down. Keep README "Architecture" in step with this. */
export const layerRanks: Readonly<Record<string, number>> = {
  util: 0, // helpers that import nothing of the project (Node-free where the SDK uses them)
  channels: 0.5, // each channel's Node-free part (packages/protocol/src/channels/<name>/): wire types, stream ids, apply
  protocol: 1, // the wire protocol, shared by relay and SDK
  upstream: 2, // everything HTTP about upstream, one folder: the client, its transport and rate gate, upstream's schemas, paging and errors
  client: 2, // the browser/Node SDK: protocol + util only
  sim: 3, // the upstream simulator
  history: 3.8, // the record of what the relay sent: the store interface, its engines, the recorder (below the streams, which record into it)
  relay: 4, // streams, registry, poller, diff, prepared frames, coordination (alone or over Redis)
  ws: 5, // the WebSocket endpoint: writes the relay's frames
  sse: 5, // the Server-Sent Events endpoint: writes the relay's frames as events
  observability: 6, // health model, metrics, logs, activity
  http: 7, // HTTP routes only
  config: 8, // options, their defaults, flags, environment and help
  workers: 8.5, // `--workers`: the primary that forks relay processes sharing a port, and their Redis
  app: 9, // src/*.ts: server assembly, CLI
};

/**
 * Layer -> room -> rank, for the layers divided into rooms (each room's `@module` headers say what
 * it owns). Keep README "Architecture" in step with this.
 */
export const roomRanks: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  relay: {
    channels: 0, // each channel's pure server part (channels/<name>/, relay-registry.ts): reading upstream's body, state, diff, codec
    '.': 0.5, // events.ts: the relay's named events (the channels' among them), emitted by every room
    streams: 1, // streams, prepared frames, resume rings, the registry, slow-consumer policy
    admission: 2, // who may connect and which markets may cost upstream requests
    coordination: 2, // one broker (leases, numbering, history, rate gate): local/ alone, redis/ a cluster
    poll: 3, // the poll side, generic over the channels: when to ask upstream (scheduler, dispatcher, budget, fair share), what every poll target shares (poll-target.ts, outcomes, not-found, the generic stream targets), the poller pool over the slices' collections of targets, freshness
    'channels/*/target': 3.5, // a channel's target part (channels/<name>/*-target.ts, *-targets.ts): what it polls, over streams, poll and coordination
    session: 3, // what every transport does when a client asks for streams
  },
  client: {
    events: 0, // the typed emitter and the one error type every part of the SDK reports with
    connection: 1, // sockets (WebSocket, SSE), reconnect with backoff, close codes, reading frames
    subscriptions: 2, // each stream the application holds, wildcards, the subscribe requests
    history: 2.5, // the record read back: replays kept in the subscriptions' stream kinds, the export reader
    '.': 3, // the client that wires them (channel-streams.ts, relay-client.ts), message routing, the package entries
  },
};

/** Module (path relative to the root, without extension) -> the modules it imports. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/** A module's layer: its top-level folder, or `app`. */
export function layerOf(module: string): string {
  const slash = module.indexOf('/');
  return slash === -1 ? 'app' : module.slice(0, slash);
}

/**
 * The room of a module inside its layer: its subfolder, or `.` for a file directly in the layer.
 * A channel slice (relay/channels/<name>/) is one folder with two parts ranked apart: the files that
 * say what the channel polls, named `*-target.ts` or `*-targets.ts`, are one room for every slice at
 * once (`channels/` then a star then `/target`), above the rooms a target needs; the rest of the
 * slice (reading upstream's body, state, diff, codec) stays in the low `channels` room.
 */
export function roomOf(module: string): string {
  const parts = module.split('/');
  if (parts.length === 4 && parts[1] === 'channels' && /-targets?$/.test(parts[3] as string))
    return `${parts[1]}/*/target`;
  return parts.length > 2 ? (parts[1] as string) : '.';
}

/**
 * Where modules live: a folder of sources, and the prefix its modules' names take (the SDK package's
 * sources are the `client` layer). A module is named by its layer path, wherever it lives, so the
 * ranks read the same across the server (src/) and the packages (packages/<name>/src/).
 */
export interface SourceRoot {
  dir: string;
  as?: string;
  /** A package's sources: they may import only packages' sources, never the server's. */
  packaged?: boolean;
}

/** Reads every .ts file under the roots and its relative imports. */
export function readImportGraph(roots: readonly SourceRoot[]): ImportGraph {
  const graph = new Map<string, string[]>();
  const visit = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(file);
      else if (entry.name.endsWith('.ts'))
        graph.set(
          moduleName(roots, file),
          importedFiles(file).map((target) => moduleName(roots, target)),
        );
    }
  };
  for (const root of roots) visit(root.dir);
  return graph;
}

/** Every import of a package's sources that reaches outside the packages, one line each. */
export function packageBoundaryViolations(roots: readonly SourceRoot[]): string[] {
  const inPackage = (file: string) => rootOf(roots, file)?.packaged === true;
  const violations: string[] = [];
  const visit = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(file);
      else if (entry.name.endsWith('.ts'))
        for (const target of importedFiles(file))
          if (!inPackage(target))
            violations.push(
              `${moduleName(roots, file)} -> ${moduleName(roots, target)}: a package imports the server`,
            );
    }
  };
  for (const root of roots) if (root.packaged) visit(root.dir);
  return violations;
}

function rootOf(roots: readonly SourceRoot[], file: string): SourceRoot | undefined {
  return roots.find((root) => !path.relative(root.dir, file).startsWith('..'));
}

function moduleName(roots: readonly SourceRoot[], file: string): string {
  const root = rootOf(roots, file);
  const relative = path
    .relative(root?.dir ?? process.cwd(), file)
    .split(path.sep)
    .join('/');
  return `${root?.as ?? ''}${relative}`.replace(/\.(ts|js)$/, '');
}

/** The files `file` imports by relative path (static imports, re-exports, dynamic `import()`). */
function importedFiles(file: string): string[] {
  const { importedFiles: imported } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const targets = imported
    .map((entry) => entry.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => path.resolve(path.dirname(file), name));
  return [...new Set(targets)];
}

/** Every broken rule, one line each; empty when the graph keeps them all. */
export function importRuleViolations(graph: ImportGraph, ranks = layerRanks, rooms = roomRanks): string[] {
  const violations: string[] = [];
  for (const [from, targets] of graph) {
    const fromLayer = layerOf(from);
    const fromRank = ranks[fromLayer];
    if (fromRank === undefined) {
      violations.push(`${from}: folder "${fromLayer}" has no declared layer`);
      continue;
    }
    for (const to of targets) {
      const toLayer = layerOf(to);
      if (toLayer === fromLayer) {
        const violation = roomViolation(from, to, rooms[fromLayer]);
        if (violation !== undefined) violations.push(violation);
        continue;
      }
      const toRank = ranks[toLayer];
      if (toRank === undefined)
        violations.push(`${from} -> ${to}: folder "${toLayer}" has no declared layer`);
      else if (toRank >= fromRank)
        violations.push(
          `${from} -> ${to}: ${fromLayer} (rank ${fromRank}) may not import ${toLayer} (rank ${toRank})`,
        );
    }
  }
  for (const cycle of cycles(graph)) violations.push(`cycle: ${cycle.join(' -> ')}`);
  return violations;
}

function roomViolation(
  from: string,
  to: string,
  rooms: Readonly<Record<string, number>> | undefined,
): string | undefined {
  if (rooms === undefined) return undefined;
  const fromRoom = roomOf(from);
  const toRoom = roomOf(to);
  if (fromRoom === toRoom) return undefined;
  const fromRank = rooms[fromRoom];
  const toRank = rooms[toRoom];
  if (fromRank === undefined) return `${from}: room "${fromRoom}" has no declared rank`;
  if (toRank === undefined) return `${from} -> ${to}: room "${toRoom}" has no declared rank`;
  if (toRank >= fromRank)
    return `${from} -> ${to}: room ${fromRoom} (rank ${fromRank}) may not import room ${toRoom} (rank ${toRank})`;
  return undefined;
}

/** One cycle per strongly connected component of more than one module (or a self-import). */
export function cycles(graph: ImportGraph): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const trail: string[] = [];
  const visit = (module: string): void => {
    state.set(module, 'open');
    trail.push(module);
    for (const next of graph.get(module) ?? []) {
      if (state.get(next) === 'open') found.push([...trail.slice(trail.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    trail.pop();
    state.set(module, 'done');
  };
  for (const module of [...graph.keys()].sort()) if (!state.has(module)) visit(module);
  return found;
}
