/**
 * @module protocol/json-patch
 * What a `rest` stream's state and updates are made of (docs/protocol.md "`rest` data"): an
 * update's `data` is an RFC 6902 JSON Patch, and every message's `checksum` is the CRC-32 of the
 * state's RFC 8785 canonical JSON. Shared by the relay (which computes checksums) and the SDK
 * (which applies patches and checks them); pure.
 * @see https://www.rfc-editor.org/rfc/rfc6902
 * @see https://www.rfc-editor.org/rfc/rfc8785
 */
import { type Crc32, canonicalJson, jsonChecksum } from '../channels/checksum.ts';
import type { JsonValue, PatchOperation } from './messages.ts';

export type { PatchOperation } from './messages.ts';

/** A JSON Pointer token (RFC 6901 section 3): `~` as `~0`, `/` as `~1`. */
export function pointerToken(key: string | number): string {
  const text = String(key);
  // Most names need no escape: skip the two passes over them (a diff writes one per member).
  if (!text.includes('~') && !text.includes('/')) return text;
  return text.replaceAll('~', '~0').replaceAll('/', '~1');
}

function tokensOf(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new Error(`JSON Pointer "${pointer}" does not start with "/"`);
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

type Container = JsonValue[] | { [key: string]: JsonValue };

function isContainer(value: JsonValue | undefined): value is Container {
  return typeof value === 'object' && value !== null;
}

/** The container a pointer's last token is in, and that token. */
function parentOf(root: JsonValue, pointer: string): { parent: Container; key: string } {
  const tokens = tokensOf(pointer);
  const key = tokens.pop();
  if (key === undefined) throw new Error('the root has no parent');
  let parent: JsonValue | undefined = root;
  for (const token of tokens) parent = isContainer(parent) ? childOf(parent, token) : undefined;
  if (!isContainer(parent)) throw new Error(`no container at "${pointer}"`);
  return { parent, key };
}

function childOf(container: Container, token: string): JsonValue | undefined {
  if (Array.isArray(container)) return container[arrayIndex(container, token, false)];
  return Object.hasOwn(container, token) ? container[token] : undefined;
}

function arrayIndex(array: JsonValue[], token: string, adding: boolean): number {
  if (adding && token === '-') return array.length;
  if (!/^(0|[1-9]\d*)$/.test(token)) throw new Error(`"${token}" is not an array index`);
  const index = Number(token);
  if (index > array.length || (!adding && index === array.length))
    throw new Error(`array index ${index} is out of range`);
  return index;
}

function valueAt(root: JsonValue, pointer: string): JsonValue {
  if (pointer === '') return root;
  const { parent, key } = parentOf(root, pointer);
  const value = childOf(parent, key);
  if (value === undefined) throw new Error(`nothing at "${pointer}"`);
  return value;
}

function remove(root: JsonValue, pointer: string): JsonValue {
  const { parent, key } = parentOf(root, pointer);
  const value = valueAt(root, pointer);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, false), 1);
  else delete parent[key];
  return value;
}

function add(root: JsonValue, pointer: string, value: JsonValue): JsonValue {
  if (pointer === '') return value;
  const { parent, key } = parentOf(root, pointer);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, true), 0, value);
  // Defined, not assigned: a member named `__proto__` (JSON may have one) stays a member.
  else Object.defineProperty(parent, key, { value, writable: true, enumerable: true, configurable: true });
  return root;
}

/** In place: a member keeps its position among its object's members, as a client's parser shows them. */
function replace(root: JsonValue, pointer: string, value: JsonValue): void {
  valueAt(root, pointer);
  const { parent, key } = parentOf(root, pointer);
  if (Array.isArray(parent)) parent[arrayIndex(parent, key, false)] = value;
  else Object.defineProperty(parent, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * The document after `patch` (RFC 6902 section 4, every operation), leaving `document` untouched;
 * throws when an operation does not apply (the SDK then resyncs the stream).
 */
export function applyPatch<T extends JsonValue>(document: T, patch: readonly PatchOperationIn[]): T {
  let root: JsonValue = structuredClone(document);
  for (const operation of patch) {
    switch (operation.op) {
      case 'add':
        root = add(root, operation.path, structuredClone(operation.value));
        break;
      case 'remove':
        remove(root, operation.path);
        break;
      case 'replace':
        if (operation.path === '') root = structuredClone(operation.value);
        else replace(root, operation.path, structuredClone(operation.value));
        break;
      case 'move':
      case 'copy': {
        const value = valueAt(root, operation.from);
        if (operation.op === 'move') remove(root, operation.from);
        root = add(root, operation.path, structuredClone(value));
        break;
      }
      case 'test':
        if (canonicalJson(valueAt(root, operation.path)) !== canonicalJson(operation.value))
          throw new Error(`test failed at "${operation.path}"`);
        break;
    }
  }
  return root as T;
}

/** Any RFC 6902 operation, as a client may meet one. */
export type PatchOperationIn =
  | PatchOperation
  | { op: 'copy'; from: string; path: string }
  | { op: 'test'; path: string; value: JsonValue };

/** A `rest` message's checksum: CRC-32 (IEEE) of the state's canonical JSON in UTF-8, unsigned. */
export function restChecksum(state: JsonValue, crc32?: Crc32): number {
  return jsonChecksum(state, crc32);
}
