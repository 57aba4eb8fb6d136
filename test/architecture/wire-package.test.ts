/**
 * @module test/architecture/wire-package
 * packages/protocol is the wire only: no Node built-in, no server package, no server-only file, no
 * circle between its folders (test/support/wire-package-rules.ts), checked on the real sources and,
 * so that a rule cannot pass vacuously, on graphs that break each one.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readWirePackage, type WirePackage, wirePackageViolations } from '../support/wire-package-rules.ts';

const at = (folder: string) => fileURLToPath(new URL(`../../${folder}`, import.meta.url));
const manifest = JSON.parse(readFileSync(at('packages/protocol/package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};
/** The request schemas: the relay validates every client frame with them; the client builds the requests they accept. */
const serverRead = ['protocol/requests'];

describe('packages/protocol is the wire only', () => {
  const wire = readWirePackage(
    at('packages/protocol/src'),
    at('packages/client/src'),
    Object.keys(manifest.dependencies),
  );

  it('imports no Node built-in and no server package, holds no server-only file, has no folder circle', () => {
    expect(wirePackageViolations(wire, serverRead)).toEqual([]);
  });

  it('reads the real package (a rule over an empty graph would pass vacuously)', () => {
    expect(wire.bare.get('protocol/decimal')).toEqual(['big.js']);
    expect(wire.graph.get('protocol/messages')).toContain('channels/registry');
    expect(wire.clientImports).toContain('protocol/messages');
    expect(wire.graph.has('protocol/requests')).toBe(true);
  });
});

describe('the wire package rules themselves', () => {
  const wireOf = (modules: Record<string, { imports?: string[]; bare?: string[] }>): WirePackage => ({
    graph: new Map(Object.entries(modules).map(([module, { imports }]) => [module, imports ?? []])),
    bare: new Map(Object.entries(modules).map(([module, { bare }]) => [module, bare ?? []])),
    clientImports: new Set(['protocol/messages']),
    dependencies: ['big.js', 'zod'],
  });

  it('rejects a Node built-in, with or without node:, a server package and an undeclared one', () => {
    const wire = wireOf({
      'protocol/messages': { imports: ['util/a', 'util/b', 'util/c'], bare: ['zod'] },
      'util/a': { bare: ['node:zlib', 'big.js'] },
      'util/b': { bare: ['events', 'ioredis'] },
      'util/c': { bare: ['ws/lib/sender', 'left-pad'] },
    });
    expect(wirePackageViolations(wire)).toEqual([
      'util/a imports node:zlib: a Node built-in',
      'util/b imports events: a Node built-in',
      'util/b imports ioredis: a server package',
      'util/c imports ws/lib/sender: a server package',
      'util/c imports left-pad: not a dependency of the wire package',
    ]);
  });

  it('rejects a file named relay… and a file no client module reaches, unless named as read by the relay', () => {
    const wire = wireOf({
      'protocol/messages': { imports: ['channels/relay-registry'] },
      'channels/relay-registry': {},
      'channels/trades/diff': {},
      'protocol/requests': { imports: ['protocol/messages'] },
    });
    expect(wirePackageViolations(wire, ['protocol/requests'])).toEqual([
      'channels/relay-registry: a server-only file (named relay…) in the wire package',
      "channels/trades/diff: no client module imports it, so it is the server's alone",
    ]);
  });

  it('rejects each circle between folders, though no module reaches itself (the circles the package had)', () => {
    const wire = wireOf({
      'protocol/messages': { imports: ['channels/registry', 'upstream/schemas'] },
      'channels/registry': { imports: ['upstream/paging'] },
      'upstream/paging': {},
      'upstream/schemas': { imports: ['protocol/limits'] },
      'protocol/limits': {},
    });
    expect(wirePackageViolations(wire)).toEqual([
      'folder circle: channels -> upstream -> protocol -> channels',
      'folder circle: upstream -> protocol -> upstream',
    ]);
  });

  it('accepts folders that import one way', () => {
    const wire = wireOf({
      'protocol/messages': { imports: ['channels/registry', 'util/sorted'], bare: ['zod'] },
      'channels/registry': { imports: ['util/sorted'] },
      'util/sorted': {},
    });
    expect(wirePackageViolations(wire)).toEqual([]);
  });
});
