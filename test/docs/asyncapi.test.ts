/**
 * @module test/docs/asyncapi.test
 * docs/asyncapi.yaml is a valid AsyncAPI 3 document that describes protocol v1 as
 * protocol/messages.ts declares it, and its examples are true to its own schemas and to the
 * relay's request parser.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CompactStreamIdentity,
  decodeCompactStreamMessage,
} from '../../packages/protocol/src/protocol/compact.ts';
import {
  bookDepths,
  channels,
  errorCodes,
  MAX_MARKETS_PER_REQUEST,
  priceFields,
} from '../../packages/protocol/src/protocol/messages.ts';
import { clientRequest } from '../../packages/protocol/src/protocol/requests.ts';
import { referenceBookChecksum } from '../support/reference-checksum.ts';
import { compilePayload, type ParsedAsyncApi, parseAsyncApi, payloadConst } from './asyncapi-document.ts';

const relayMessageTypes = [
  'subscribed',
  'unsubscribed',
  'snapshot',
  'update',
  'status',
  'confirmed',
  'error',
  'pong',
  'heartbeat',
  'subscriptions',
  'going_away',
  'replay_gap',
  'replayed',
];
const clientOps = ['subscribe', 'unsubscribe', 'ping', 'update', 'list', 'replay', 'replay_stop'];

type Level = [string, string];

let parsed: ParsedAsyncApi;
beforeAll(async () => {
  parsed = await parseAsyncApi();
});

function messages() {
  return parsed.document.messages;
}

interface Server {
  protocol?: string;
  host?: string;
  pathname?: string;
  security?: { type?: string; scheme?: string; in?: string }[];
}

interface SchemaObject {
  enum?: unknown[];
  properties?: Record<string, SchemaObject>;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
}

function schema(name: string): SchemaObject {
  const found = parsed.document.schemas[name];
  if (found === undefined) throw new Error(`components.schemas.${name} missing`);
  return found as SchemaObject;
}

describe('docs/asyncapi.yaml', () => {
  it('is a valid AsyncAPI 3.0.0 document with no error diagnostics', () => {
    expect(parsed.errors).toEqual([]);
    expect(parsed.document.raw.asyncapi).toBe('3.0.0');
  });

  it('declares the relay server at ws://localhost:8080/v1/ws with optional API-key security', () => {
    const servers = parsed.document.resolved.servers as Record<string, Server>;
    const server = servers.relay;
    expect(server?.protocol).toBe('ws');
    expect(server?.host).toBe('localhost:8080');
    expect(server?.pathname).toBe('/v1/ws');
    expect(server?.security?.map((s) => [s.type, s.scheme ?? s.in])).toEqual([
      ['http', 'bearer'],
      ['httpApiKey', 'query'],
    ]);
  });

  it('has exactly one message per relay message type (per channel for snapshot/update)', () => {
    const types = messages().map((m) => payloadConst(m, 'type'));
    expect(new Set(types.filter((t) => t !== undefined))).toEqual(new Set(relayMessageTypes));
    const streamMessages = messages()
      .filter((m) => ['snapshot', 'update'].includes(String(payloadConst(m, 'type'))))
      .map((m) => `${String(payloadConst(m, 'type'))}/${String(payloadConst(m, 'channel'))}`);
    expect(streamMessages.sort()).toEqual(
      channels.flatMap((channel) => [`snapshot/${channel}`, `update/${channel}`]).sort(),
    );
  });

  it('has a message for every client op, received by the relay', () => {
    const ops = messages().map((m) => payloadConst(m, 'op'));
    expect(new Set(ops.filter((op) => op !== undefined))).toEqual(new Set(clientOps));
    const operations = parsed.document.operations;
    const received = operations
      .filter((operation) => operation.action === 'receive')
      .flatMap((operation) => operation.messages.map((m) => payloadConst(m, 'op')));
    expect(new Set(received)).toEqual(new Set(clientOps));
    const sent = operations
      .filter((operation) => operation.action === 'send')
      .flatMap((operation) => [...operation.messages, ...operation.replyMessages])
      .map((m) => payloadConst(m, 'type'));
    const replies = operations
      .filter((operation) => operation.action === 'receive')
      .flatMap((operation) => operation.replyMessages)
      .map((m) => payloadConst(m, 'type'));
    // The compact encoding's array (no `type`) is the one other message the relay sends.
    expect(new Set([...sent, ...replies])).toEqual(new Set([...relayMessageTypes, undefined]));
    expect(
      messages()
        .filter((m) => payloadConst(m, 'type') === undefined && payloadConst(m, 'op') === undefined)
        .map((m) => m.id),
    ).toEqual(['compactStreamMessage']);
  });

  it('has compact examples that decode to JSON examples of the same document', () => {
    const lookup = new Map<number, CompactStreamIdentity>([
      [3, { channel: 'book', market: '3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f', depth: 10 }],
      [4, { channel: 'price', market: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d' }],
    ]);
    const jsonExamples = messages()
      .filter((m) => payloadConst(m, 'type') !== undefined)
      .flatMap((m) => m.examples.map((example) => example.payload));
    const compact = messages().find((m) => m.id === 'compactStreamMessage')!;
    for (const example of compact.examples) {
      const decoded = decodeCompactStreamMessage(example.payload, lookup);
      expect(decoded.ok, example.name).toBe(true);
      if (decoded.ok) expect(jsonExamples, example.name).toContainEqual(decoded.message);
    }
  });

  it('gives every message at least one example, each valid against its payload schema', () => {
    for (const message of messages()) {
      const examples = message.examples;
      expect(examples.length, `message ${message.id} has no example`).toBeGreaterThan(0);
      const validate = compilePayload(message);
      for (const example of examples) {
        const valid = validate(example.payload);
        expect(valid, `${message.id}/${example.name}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
    }
  });

  it('has client-op examples that the relay request parser (clientRequest) accepts unchanged', () => {
    const opMessages = messages().filter((m) => payloadConst(m, 'op') !== undefined);
    expect(opMessages.length).toBe(clientOps.length);
    for (const message of opMessages) {
      for (const example of message.examples) {
        const result = clientRequest.safeParse(example.payload);
        expect(result.success, `${message.id}/${example.name}: ${result.error?.message}`).toBe(true);
        expect(result.data).toEqual(example.payload);
      }
    }
  });

  it('rejects what clientRequest rejects: the schemas agree on bounds', () => {
    const validate = compilePayload(messages().find((m) => payloadConst(m, 'op') === 'subscribe')!);
    const market = '3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f';
    const tooMany = Array.from({ length: MAX_MARKETS_PER_REQUEST + 1 }, () => market);
    const bad = [
      { op: 'subscribe', channel: 'book', markets: [] },
      { op: 'subscribe', channel: 'book', markets: tooMany },
      { op: 'subscribe', channel: 'book', markets: ['not-a-uuid'] },
      { op: 'subscribe', channel: 'book', markets: [market], depth: 20 },
      { op: 'subscribe', channel: 'book', markets: [market], resume: { [market]: { epoch: 'e', seq: -1 } } },
      { op: 'subscribe', channel: 'book', markets: [market], id: 1.5 },
    ];
    for (const request of bad) {
      expect(clientRequest.safeParse(request).success, JSON.stringify(request)).toBe(false);
      expect(validate(request), JSON.stringify(request).slice(0, 120)).toBe(false);
    }
  });

  it('uses the enums of packages/protocol/src/protocol/messages.ts', () => {
    expect(schema('Error').properties?.code?.enum).toEqual([...errorCodes]);
    expect(schema('Channel').enum).toEqual([...channels]);
    expect(schema('Depth').enum).toEqual([...bookDepths, null]);
    expect(schema('MarketList').maxItems).toBe(MAX_MARKETS_PER_REQUEST);
    expect(Object.keys(schema('PriceData').properties ?? {})).toEqual([...priceFields]);
    expect(Object.keys(schema('PriceUpdateData').properties ?? {})).toEqual([...priceFields]);
    expect(schema('Checksum').minimum).toBe(0);
    expect(schema('Checksum').maximum).toBe(2 ** 32 - 1);
  });

  it('offers a request the depths the relay takes, "full" among them', () => {
    const validate = compilePayload(messages().find((m) => payloadConst(m, 'op') === 'subscribe')!);
    const market = '3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f';
    expect(schema('RequestDepth').enum).toEqual([...bookDepths, 'full', null]);
    for (const depth of [...bookDepths, 'full', null, 7, '10']) {
      const request = { op: 'subscribe', channel: 'book', markets: [market], depth };
      expect(validate(request), String(depth)).toBe(clientRequest.safeParse(request).success);
    }
  });

  it('has book snapshot examples whose checksum matches their levels', () => {
    const snapshots = messages().filter(
      (m) => payloadConst(m, 'type') === 'snapshot' && payloadConst(m, 'channel') === 'book',
    );
    const examples = snapshots.flatMap((m) => m.examples);
    expect(examples.length).toBeGreaterThan(0);
    for (const example of examples) {
      const payload = example.payload as { data: { bids: Level[]; asks: Level[] }; checksum: number };
      expect(payload.checksum).toBe(referenceBookChecksum(payload.data.bids, payload.data.asks));
    }
  });
});
