import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  cycles,
  importRuleViolations,
  packageBoundaryViolations,
  readImportGraph,
  roomOf,
  type SourceRoot,
} from '../support/import-rules.ts';

const at = (folder: string) => fileURLToPath(new URL(`../../${folder}`, import.meta.url));
/** The server and the packages it is built with; the SDK package's sources are the `client` layer. */
const roots: SourceRoot[] = [
  { dir: at('src') },
  { dir: at('packages/protocol/src'), packaged: true },
  { dir: at('packages/client/src'), as: 'client/', packaged: true },
];

describe('import rules of src/ and packages/', () => {
  it('every import points down the layers and no module reaches itself', () => {
    expect(importRuleViolations(readImportGraph(roots))).toEqual([]);
  });

  it("no package imports the server's sources", () => {
    expect(packageBoundaryViolations(roots)).toEqual([]);
  });

  it('reads the real graph (a rule over an empty graph would pass vacuously)', () => {
    const graph = readImportGraph(roots);
    expect(graph.get('relay/streams/registry')).toContain('relay/streams/stream');
    expect(graph.get('relay/poll/poller-pool')).toContain('relay/poll/dispatcher');
    expect(graph.get('ws/endpoint')?.some((module) => module.startsWith('relay/'))).toBe(true);
    expect(graph.get('client/relay-client')).toEqual(
      expect.arrayContaining(['client/connection/relay-connection', 'client/subscriptions/subscriptions']),
    );
  });
});

describe('the checker itself', () => {
  it('rejects an upward import', () => {
    const graph = new Map([
      ['util/version', []],
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

  it('rejects an import of a higher or sibling room, and an undeclared room', () => {
    const graph = new Map([
      ['relay/streams/registry', ['relay/poll/poller-pool', 'relay/admission/market']],
      ['relay/poll/poller-pool', ['relay/streams/registry']],
      ['relay/admission/market', ['relay/coordination/redis/broker', 'relay/streams/registry']],
      ['relay/coordination/redis/broker', []],
      ['relay/lobby/desk', ['relay/streams/registry']],
    ]);
    expect(importRuleViolations(graph)).toEqual([
      'relay/streams/registry -> relay/poll/poller-pool: room streams (rank 1) may not import room poll (rank 3)',
      'relay/streams/registry -> relay/admission/market: room streams (rank 1) may not import room admission (rank 2)',
      'relay/admission/market -> relay/coordination/redis/broker: room admission (rank 2) may not import room coordination (rank 2)',
      'relay/lobby/desk: room "lobby" has no declared rank',
      'cycle: relay/streams/registry -> relay/poll/poller-pool -> relay/streams/registry',
      'cycle: relay/admission/market -> relay/streams/registry -> relay/admission/market',
    ]);
  });

  it("rejects an upward import between the client's rooms", () => {
    const graph = new Map([
      ['client/connection/frames', ['client/subscriptions/stream-subscription']],
      ['client/subscriptions/stream-subscription', ['client/events/emitter']],
      ['client/events/emitter', ['client/relay-client']],
      ['client/relay-client', []],
    ]);
    expect(importRuleViolations(graph)).toEqual([
      'client/connection/frames -> client/subscriptions/stream-subscription: room connection (rank 1) may not import room subscriptions (rank 2)',
      'client/events/emitter -> client/relay-client: room events (rank 0) may not import room . (rank 3)',
    ]);
  });

  it("puts a slice's target files in a room above streams, poll and coordination, and its pure part below", () => {
    expect(roomOf('relay/channels/book/book-target')).toBe('channels/*/target');
    expect(roomOf('relay/channels/book/reader')).toBe('channels');
    const graph = new Map([
      ['relay/channels/book/book-target', ['relay/poll/poll-target', 'relay/channels/book/reader']],
      ['relay/channels/price/price-targets', ['relay/poll/scheduler', 'relay/coordination/broker']],
      ['relay/channels/book/reader', ['relay/channels/book/book-target']],
      ['relay/poll/poller-pool', ['relay/channels/book/book-target']],
      ['relay/poll/poll-target', []],
      ['relay/poll/scheduler', []],
      ['relay/coordination/broker', []],
    ]);
    expect(importRuleViolations(graph)).toEqual([
      'relay/channels/book/reader -> relay/channels/book/book-target: room channels (rank 0) may not import room channels/*/target (rank 3.5)',
      'relay/poll/poller-pool -> relay/channels/book/book-target: room poll (rank 3) may not import room channels/*/target (rank 3.5)',
      'cycle: relay/channels/book/book-target -> relay/channels/book/reader -> relay/channels/book/book-target',
    ]);
  });

  it('accepts a graph that only points down', () => {
    const graph = new Map([
      ['app-server', ['http/routes', 'util/x']],
      ['http/routes', ['observability/health', 'relay/stream']],
      ['observability/health', ['relay/stream']],
      ['relay/stream', ['protocol/messages', 'util/x']],
      ['relay/poll/book', ['relay/streams/stream', 'relay/poll/scheduler', 'relay/events']],
      ['relay/streams/stream', ['relay/channels/codecs', 'relay/events']],
      ['relay/poll/scheduler', []],
      ['relay/channels/codecs', []],
      ['relay/events', []],
      ['protocol/messages', []],
      ['util/x', []],
    ]);
    expect(cycles(graph)).toEqual([]);
    expect(importRuleViolations(graph)).toEqual([]);
  });
});
