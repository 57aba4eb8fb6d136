/**
 * @module test/docs/asyncapi-document
 * Loads docs/asyncapi.yaml once per test file and compiles its message payloads, so the doc tests
 * can check examples (both documents' examples) against the schemas the AsyncAPI file publishes.
 */
import { readFileSync } from 'node:fs';
import {
  type AsyncAPIDocumentInterface,
  type Diagnostic,
  type MessageInterface,
  Parser,
} from '@asyncapi/parser';
import { Ajv, type ValidateFunction } from 'ajv';

export const asyncapiPath = new URL('../../docs/asyncapi.yaml', import.meta.url);
export const protocolDocPath = new URL('../../docs/protocol.md', import.meta.url);

export interface ParsedAsyncApi {
  document: AsyncAPIDocumentInterface;
  diagnostics: Diagnostic[];
}

export async function parseAsyncApi(): Promise<ParsedAsyncApi> {
  const { document, diagnostics } = await new Parser().parse(readFileSync(asyncapiPath, 'utf8'));
  if (document === undefined) {
    const reasons = diagnostics.map((d) => `${d.path.join('.')}: ${d.message}`).join('\n');
    throw new Error(`docs/asyncapi.yaml does not parse:\n${reasons}`);
  }
  return { document, diagnostics };
}

/** The `const` of a top-level payload property (`type` for relay messages, `op` for client ops). */
export function payloadConst(message: MessageInterface, property: string): unknown {
  return message.payload()?.properties()?.[property]?.const();
}

/**
 * Format assertions are off: ajv knows no formats without a plugin, and every `format: date-time`
 * in the document is backed by a stricter `pattern`. Strict mode is off because AsyncAPI schemas
 * carry keywords ajv does not know (`x-parser-schema-id`, `examples`).
 */
export function compilePayload(message: MessageInterface): ValidateFunction {
  const payload = message.payload();
  if (payload === undefined) throw new Error(`message ${message.id()} has no payload`);
  const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });
  return ajv.compile(payload.json());
}

/**
 * The AsyncAPI message describing a relay message: matched on `type`, and on `channel` where the
 * message's payload pins one (snapshots and updates differ per channel).
 */
export function relayMessageFor(
  document: AsyncAPIDocumentInterface,
  sample: { type?: unknown; channel?: unknown },
): MessageInterface | undefined {
  return document
    .messages()
    .all()
    .find((message) => {
      if (payloadConst(message, 'type') !== sample.type) return false;
      const channel = payloadConst(message, 'channel');
      return channel === undefined || channel === sample.channel;
    });
}
