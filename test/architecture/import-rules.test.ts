import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cycles, importRuleViolations, readImportGraph } from '../support/import-rules.ts';

const src = fileURLToPath(new URL('../../src', import.meta.url));

describe('import rules of src/', () => {
  it('every import points down the layers and no module reaches itself', () => {
    expect(importRuleViolations(readImportGraph(src))).toEqual([]);
  });

  it('reads the real graph (a rule over an empty graph would pass vacuously)', () => {
    const graph = readImportGraph(src);
    expect(graph.get('relay/registry')).toContain('relay/stream');
    expect(graph.get('ws/endpoint')?.some((module) => module.startsWith('relay/'))).toBe(true);
  });
});

describe('the checker itself', () => {
  it('rejects an upward import', () => {
    const graph = new Map([
      ['util/token-bucket', []],
      ['protocol/messages', ['relay/stream']],
      ['relay/stream', ['protocol/messages']],
    ]);
    expect(importRuleViolations(graph)).toEqual([
      'protocol/messages -> relay/stream: protocol (rank 1) may not import relay (rank 4)',
      'cycle: protocol/messages -> relay/stream -> protocol/messages',
    ]);
  });

  it('rejects an import between sibling layers of the same rank', () => {
    const graph = new Map([
      ['client/relay-client', ['upstream/schemas']],
      ['upstream/schemas', []],
    ]);
    expect(importRuleViolations(graph)).toEqual([
      'client/relay-client -> upstream/schemas: client (rank 2) may not import upstream (rank 2)',
    ]);
  });

  it('rejects a cycle inside one layer, and an undeclared folder', () => {
    const graph = new Map([
      ['relay/a', ['relay/b']],
      ['relay/b', ['relay/c']],
      ['relay/c', ['relay/a']],
      ['extras/thing', []],
    ]);
    expect(importRuleViolations(graph)).toEqual([
      'extras/thing: folder "extras" has no declared layer',
      'cycle: relay/a -> relay/b -> relay/c -> relay/a',
    ]);
  });

  it('accepts a graph that only points down', () => {
    const graph = new Map([
      ['app-server', ['http/routes', 'util/x']],
      ['http/routes', ['observability/health', 'relay/stream']],
      ['observability/health', ['relay/stream']],
      ['relay/stream', ['protocol/messages', 'util/x']],
      ['protocol/messages', []],
      ['util/x', []],
    ]);
    expect(cycles(graph)).toEqual([]);
    expect(importRuleViolations(graph)).toEqual([]);
  });
});
