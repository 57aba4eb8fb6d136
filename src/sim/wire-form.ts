/**
 * @module sim/wire-form
 * How a profile writes and delivers an answer, where the interface leaves it open and real services
 * differ (sim/profile.ts): times with an offset and without fractions, a field added to every
 * record, the body compressed as asked or unasked. Applied to the rendered answer, after the routes
 * made it, so the routes keep one form.
 */
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { isMarketId } from '../../packages/protocol/src/protocol/limits.ts';
import type { SimulatorProfile } from './profile.ts';

/** The field `extraFields` adds: an object, so that a reader must keep it whole. */
export const EXTRA_FIELD = 'sim_extra';
const EXTRA_VALUE = { note: 'a field the interface does not list' };

const ISO_MILLISECONDS_Z = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?Z$/;

/** The body in the profile's written form: the same value when it changes nothing. */
export function writtenForm(profile: SimulatorProfile, body: unknown): unknown {
  if (profile.timeForm === 'z-milliseconds' && !profile.extraFields) return body;
  return rewrite(body, profile);
}

function rewrite(value: unknown, profile: SimulatorProfile): unknown {
  if (typeof value === 'string') {
    if (profile.timeForm !== 'offset-seconds') return value;
    const match = ISO_MILLISECONDS_Z.exec(value);
    return match === null ? value : `${match[1]}+00:00`;
  }
  if (Array.isArray(value)) return value.map((item) => rewrite(item, profile));
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value).map(([key, item]) => [key, rewrite(item, profile)] as const);
  // A map keyed by market id (the probabilities) is no record: a key added there would be a market.
  const record = entries.length > 0 && !entries.every(([key]) => isMarketId(key));
  if (profile.extraFields && record) entries.push([EXTRA_FIELD, EXTRA_VALUE]);
  return Object.fromEntries(entries);
}

export interface Delivery {
  body: Buffer | string;
  headers: Record<string, string>;
}

/** The rendered text as sent: compressed when the profile does so for this `Accept-Encoding`. */
export function delivery(
  profile: SimulatorProfile,
  text: string,
  acceptEncoding: string | undefined,
): Delivery {
  const coding = codingFor(profile, acceptEncoding);
  if (coding === 'gzip') return { body: gzipSync(text), headers: { 'content-encoding': 'gzip' } };
  if (coding === 'br') {
    // Quality 4: a CDN's on-the-fly setting, not the archival 11 (far slower per answer).
    const body = brotliCompressSync(text, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } });
    return { body, headers: { 'content-encoding': 'br' } };
  }
  return { body: text, headers: {} };
}

function codingFor(profile: SimulatorProfile, acceptEncoding: string | undefined): 'gzip' | 'br' | undefined {
  if (profile.compression === 'gzip-unasked') return 'gzip';
  if (profile.compression === 'none') return undefined;
  const accepted = acceptedCodings(acceptEncoding ?? '');
  if (accepted.has('br')) return 'br';
  return accepted.has('gzip') ? 'gzip' : undefined;
}

/** The codings a request accepts (`q=0` refuses one). */
function acceptedCodings(header: string): Set<string> {
  const accepted = new Set<string>();
  for (const part of header.split(',')) {
    const [name = '', ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase());
    const refused = parameters.some((parameter) => /^q=0(\.0*)?$/.test(parameter));
    if (name !== '' && !refused) accepted.add(name);
  }
  return accepted;
}
