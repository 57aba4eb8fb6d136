/**
 * @module channels/checksum
 * The checksum of a state sent as JSON (`rest`'s, and a channel's that declares one): CRC-32 (IEEE)
 * of the state's RFC 8785 canonical JSON in UTF-8, unsigned. Node-free: the relay passes Node's
 * native CRC-32, the SDK takes the portable one.
 * @see https://www.rfc-editor.org/rfc/rfc8785
 */
import CRC32 from 'crc-32';
import type { JsonValue } from './records.ts';

/** CRC-32 (IEEE, as zlib's crc32) of a string's UTF-8 bytes, unsigned; 0 for the empty string. */
export type Crc32 = (text: string) => number;

/** The portable CRC-32 (the `crc-32` package), for the browser SDK; the relay passes Node's native one. */
export const portableCrc32: Crc32 = (text) => CRC32.str(text) >>> 0;

/**
 * RFC 8785 canonical JSON: no whitespace, object members sorted by their names' UTF-16 code
 * units, strings and numbers as ECMAScript's JSON.stringify writes them.
 */
export function canonicalJson(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key] as JsonValue)}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** CRC-32 of the state's canonical JSON. */
export function jsonChecksum(state: JsonValue, crc32: Crc32 = portableCrc32): number {
  return crc32(canonicalJson(state));
}
