/**
 * @module bench/heap-diff
 * `node --import tsx bench/heap-diff.ts <before.heapsnapshot> <after.heapsnapshot> [rows]`: what
 * grew between two heap snapshots of one process (the long soak's `--profile-dir` writes them),
 * by constructor: the objects' count and the bytes each constructor's objects keep alive (their
 * retained size, from the snapshot's dominator tree), largest growth first. A cache filling shows
 * as its owner's retained size growing while its count stays; a leak of whole objects as a count
 * that grows with the run.
 */
import { readFileSync } from 'node:fs';

interface RawSnapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** Count and retained bytes per constructor (objects and closures only). */
type ByConstructor = Map<string, { count: number; retained: number }>;

function retainedByConstructor(path: string): ByConstructor {
  const { snapshot, nodes, edges, strings } = JSON.parse(readFileSync(path, 'utf8')) as RawSnapshot;
  const { meta } = snapshot;
  const nodeWidth = meta.node_fields.length;
  const edgeWidth = meta.edge_fields.length;
  const [typeAt, nameAt, sizeAt, edgeCountAt] = ['type', 'name', 'self_size', 'edge_count'].map((field) =>
    meta.node_fields.indexOf(field),
  ) as [number, number, number, number];
  const edgeTypeAt = meta.edge_fields.indexOf('type');
  const toAt = meta.edge_fields.indexOf('to_node');
  // Weak and shortcut edges keep nothing alive.
  const ignored = new Set(['weak', 'shortcut'].map((type) => meta.edge_types[0].indexOf(type)));
  const count = nodes.length / nodeWidth;
  const firstEdge = new Uint32Array(count + 1);
  for (let node = 0; node < count; node++)
    firstEdge[node + 1] = firstEdge[node]! + nodes[node * nodeWidth + edgeCountAt]! * edgeWidth;
  const children = (node: number, visit: (child: number) => void) => {
    for (let edge = firstEdge[node]!; edge < firstEdge[node + 1]!; edge += edgeWidth)
      if (!ignored.has(edges[edge + edgeTypeAt]!)) visit(edges[edge + toAt]! / nodeWidth);
  };

  // Post-order from the root (node 0), without recursion: snapshots are millions of nodes deep.
  const postIndex = new Int32Array(count).fill(-1);
  const postOrder: number[] = [];
  const stack: number[] = [0];
  const expanded = new Uint8Array(count);
  const reached = new Uint8Array(count);
  reached[0] = 1;
  while (stack.length > 0) {
    const node = stack.at(-1)!;
    if (expanded[node] === 1) {
      stack.pop();
      postIndex[node] = postOrder.length;
      postOrder.push(node);
      continue;
    }
    expanded[node] = 1;
    children(node, (child) => {
      if (reached[child] === 1) return;
      reached[child] = 1;
      stack.push(child);
    });
  }
  const predecessors: number[][] = Array.from({ length: count }, () => []);
  for (const node of postOrder) children(node, (child) => predecessors[child]!.push(node));

  // Dominators by Cooper, Harvey and Kennedy's iteration over the reverse post-order.
  const dominator = new Int32Array(count).fill(-1);
  dominator[0] = 0;
  const intersect = (first: number, second: number) => {
    let a = first;
    let b = second;
    while (a !== b) {
      while (postIndex[a]! < postIndex[b]!) a = dominator[a]!;
      while (postIndex[b]! < postIndex[a]!) b = dominator[b]!;
    }
    return a;
  };
  for (let changed = true; changed; ) {
    changed = false;
    for (let index = postOrder.length - 2; index >= 0; index--) {
      const node = postOrder[index]!;
      let found = -1;
      for (const predecessor of predecessors[node]!)
        if (dominator[predecessor] !== -1) found = found === -1 ? predecessor : intersect(predecessor, found);
      if (found !== dominator[node]) {
        dominator[node] = found;
        changed = true;
      }
    }
  }
  const retained = new Float64Array(count);
  for (const node of postOrder) {
    retained[node]! += nodes[node * nodeWidth + sizeAt]!;
    if (node !== 0) retained[dominator[node]!]! += retained[node]!;
  }

  const byConstructor: ByConstructor = new Map();
  const types = meta.node_types[0];
  for (const node of postOrder) {
    const type = types[nodes[node * nodeWidth + typeAt]!];
    if (type !== 'object' && type !== 'closure') continue;
    const name = `${type === 'closure' ? 'closure ' : ''}${strings[nodes[node * nodeWidth + nameAt]!]}`;
    const entry = byConstructor.get(name) ?? { count: 0, retained: 0 };
    entry.count += 1;
    entry.retained += retained[node]!;
    byConstructor.set(name, entry);
  }
  return byConstructor;
}

const [beforePath, afterPath, rowsArgument] = process.argv.slice(2);
if (beforePath === undefined || afterPath === undefined) {
  console.error(
    'usage: node --import tsx bench/heap-diff.ts <before.heapsnapshot> <after.heapsnapshot> [rows]',
  );
  process.exit(2);
}
const before = retainedByConstructor(beforePath);
const after = retainedByConstructor(afterPath);
const kB = (bytes: number) => (bytes / 1024).toFixed(0);
const rows = [...new Set([...before.keys(), ...after.keys()])]
  .map((name) => {
    const then = before.get(name) ?? { count: 0, retained: 0 };
    const now = after.get(name) ?? { count: 0, retained: 0 };
    return { name, then, now, growth: now.retained - then.retained };
  })
  .sort((a, b) => b.growth - a.growth)
  .slice(0, Number(rowsArgument ?? 40));
// Retained sizes nest (a Map's retained size is part of its owner's): read a row with its owners.
console.log('| constructor | count before -> after | retained kB before -> after | growth kB |');
console.log('|---|---|---|---|');
for (const { name, then, now, growth } of rows)
  console.log(
    `| ${name} | ${then.count} -> ${now.count} | ${kB(then.retained)} -> ${kB(now.retained)} | ${kB(growth)} |`,
  );
