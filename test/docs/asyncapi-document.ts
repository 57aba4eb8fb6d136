/**
 * @module test/docs/asyncapi-document
 * Loads docs/asyncapi.yaml once per test file: checks it against the AsyncAPI 3.0.0 JSON Schema
 * (`@asyncapi/specs`), resolves its local `$ref`s and compiles its message payloads, so the doc
 * tests can check examples (both documents' examples) against the schemas the AsyncAPI file
 * publishes.
 *
 * Written here rather than taken from `@asyncapi/parser`: the doc tests need only the document's
 * own references resolved and the specification's schema applied, and the parser brought 14 MB of
 * linting packages with an install-time analytics script into every clone.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { parse } from 'yaml';

export const asyncapiPath = new URL('../../docs/asyncapi.yaml', import.meta.url);
export const protocolDocPath = new URL('../../docs/protocol.md', import.meta.url);

type Json = Record<string, unknown>;

export interface AsyncApiExample {
  name: string;
  payload: unknown;
}

export interface AsyncApiMessage {
  /** Its key under `components.messages`. */
  id: string;
  /** The payload schema with every `$ref` resolved. */
  payload: Json;
  examples: AsyncApiExample[];
}

export interface AsyncApiOperation {
  id: string;
  action: 'send' | 'receive';
  messages: AsyncApiMessage[];
  replyMessages: AsyncApiMessage[];
}

export interface AsyncApiDocument {
  /** The document as written, references unresolved. */
  raw: Json;
  /** The document with every local `$ref` resolved. */
  resolved: Json;
  messages: AsyncApiMessage[];
  operations: AsyncApiOperation[];
  /** `components.schemas`, resolved. */
  schemas: Record<string, Json>;
}

export interface ParsedAsyncApi {
  document: AsyncApiDocument;
  /** Where the document breaks the AsyncAPI 3.0.0 JSON Schema; empty when valid. */
  errors: string[];
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function pointer(root: Json, ref: string): unknown {
  if (!ref.startsWith('#/'))
    throw new Error(`docs/asyncapi.yaml: only local references are expected, got ${ref}`);
  let at: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (!isObject(at) || !(key in at)) throw new Error(`docs/asyncapi.yaml: unresolved reference ${ref}`);
    at = at[key];
  }
  return at;
}

/** Replaces every `{ $ref }` by what it points at (the document has no recursive schemas). */
function resolveRefs(root: Json, value: unknown, trail: string[] = []): unknown {
  if (Array.isArray(value)) return value.map((item) => resolveRefs(root, item, trail));
  if (!isObject(value)) return value;
  const ref = value.$ref;
  if (typeof ref === 'string') {
    if (trail.includes(ref))
      throw new Error(`docs/asyncapi.yaml: circular reference ${[...trail, ref].join(' -> ')}`);
    return resolveRefs(root, pointer(root, ref), [...trail, ref]);
  }
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, resolveRefs(root, item, trail)]),
  );
}

function specificationErrors(raw: Json): string[] {
  const require = createRequire(import.meta.url);
  const schema = require('@asyncapi/specs/schemas/3.0.0-without-$id.json') as Json;
  const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });
  const validate = ajv.compile(schema);
  if (validate(raw)) return [];
  return (validate.errors ?? []).map(
    (e: ErrorObject) => `${e.instancePath || '/'}: ${e.message ?? e.keyword}`,
  );
}

export async function parseAsyncApi(): Promise<ParsedAsyncApi> {
  const raw = parse(readFileSync(asyncapiPath, 'utf8')) as Json;
  const resolved = resolveRefs(raw, raw) as Json;
  const components = (resolved.components ?? {}) as Json;
  const rawMessages = (components.messages ?? {}) as Record<string, Json>;
  const messages: AsyncApiMessage[] = Object.entries(rawMessages).map(([id, message]) => ({
    id,
    payload: (message.payload ?? {}) as Json,
    examples: ((message.examples ?? []) as Json[]).map((example, index) => ({
      name: typeof example.name === 'string' ? example.name : `example ${index + 1}`,
      payload: example.payload,
    })),
  }));
  const messageOf = (reference: unknown): AsyncApiMessage => {
    // Follows the reference chain (operation -> channel -> component) in the document as written.
    let at = reference;
    while (isObject(at) && typeof at.$ref === 'string') {
      const id = /^#\/components\/messages\/([^/]+)$/.exec(at.$ref)?.[1];
      const found = messages.find((message) => message.id === id);
      if (found !== undefined) return found;
      at = pointer(raw, at.$ref);
    }
    throw new Error('docs/asyncapi.yaml: an operation names a message outside components.messages');
  };
  const operations = Object.entries((raw.operations ?? {}) as Record<string, Json>).map(
    ([id, operation]) => ({
      id,
      action: operation.action as 'send' | 'receive',
      messages: ((operation.messages ?? []) as unknown[]).map(messageOf),
      replyMessages: (((operation.reply as Json | undefined)?.messages ?? []) as unknown[]).map(messageOf),
    }),
  );
  return {
    document: {
      raw,
      resolved,
      messages,
      operations,
      schemas: (components.schemas ?? {}) as Record<string, Json>,
    },
    errors: specificationErrors(raw),
  };
}

/** The `const` of a top-level payload property (`type` for relay messages, `op` for client ops). */
export function payloadConst(message: AsyncApiMessage, property: string): unknown {
  const properties = message.payload.properties;
  if (!isObject(properties)) return undefined;
  const schema = properties[property];
  return isObject(schema) ? schema.const : undefined;
}

/**
 * Format assertions are off: ajv knows no formats without a plugin, and every `format: date-time`
 * in the document is backed by a stricter `pattern`. Strict mode is off because AsyncAPI schemas
 * carry keywords ajv does not know (`examples`).
 */
export function compilePayload(message: AsyncApiMessage): ValidateFunction {
  let validate = compiled.get(message);
  if (validate === undefined) {
    validate = payloadAjv.compile(message.payload);
    compiled.set(message, validate);
  }
  return validate;
}

const payloadAjv = new Ajv({ strict: false, validateFormats: false, allErrors: true });
const compiled = new WeakMap<AsyncApiMessage, ValidateFunction>();

/**
 * The AsyncAPI message describing a relay message: matched on `type`, and on `channel` where the
 * message's payload pins one (snapshots and updates differ per channel).
 */
export function relayMessageFor(
  document: AsyncApiDocument,
  sample: { type?: unknown; channel?: unknown },
): AsyncApiMessage | undefined {
  return document.messages.find((message) => {
    if (payloadConst(message, 'type') !== sample.type) return false;
    const channel = payloadConst(message, 'channel');
    return channel === undefined || channel === sample.channel;
  });
}
