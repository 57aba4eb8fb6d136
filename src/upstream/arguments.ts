/**
 * @module upstream/arguments
 * Checks on every caller-supplied value that goes into an upstream URL or body, run before any
 * request: market ids must be UUIDs ("Market IDs are checked as UUIDs before they go into a URL"),
 * batches hold 1 to 100 of them (docs/upstream.md), and no argument can escape its path
 * segment.
 */

import { UpstreamInvalidArgumentError } from './errors.ts';
import * as schemas from './schemas.ts';

/** Batch endpoints accept at most 100 ids (docs/upstream.md). */
export const MAX_BATCH_IDS = 100;

export function checkMarketId(endpoint: string, id: unknown): string {
  if (typeof id !== 'string' || !schemas.uuid.safeParse(id).success) {
    throw new UpstreamInvalidArgumentError(endpoint, `market id is not a UUID: ${show(id)}`);
  }
  return id;
}

export function checkMarketIds(endpoint: string, ids: unknown): string[] {
  if (!Array.isArray(ids) || ids.length === 0) {
    throw new UpstreamInvalidArgumentError(endpoint, 'market ids must be a non-empty array');
  }
  if (ids.length > MAX_BATCH_IDS) {
    throw new UpstreamInvalidArgumentError(endpoint, `${ids.length} market ids, at most ${MAX_BATCH_IDS}`);
  }
  return ids.map((id) => checkMarketId(endpoint, id));
}

/** Token ids are integers (docs/upstream.md, Token `id`). */
export function checkTokenId(endpoint: string, id: unknown): string {
  const text = typeof id === 'number' && Number.isSafeInteger(id) ? String(id) : id;
  if (typeof text !== 'string' || !/^\d{1,16}$/.test(text)) {
    throw new UpstreamInvalidArgumentError(endpoint, `token id is not a non-negative integer: ${show(id)}`);
  }
  return text;
}

/** Free text (usernames): percent-encoded; dot segments would still be resolved by a server, so refused. */
export function checkPathSegment(endpoint: string, name: string, value: unknown): string {
  if (typeof value !== 'string' || value === '' || value === '.' || value === '..') {
    throw new UpstreamInvalidArgumentError(endpoint, `${name} is not a usable path segment: ${show(value)}`);
  }
  return encodeURIComponent(value);
}

function show(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Feed ids are hex strings (docs/upstream.md, Token price `feed_id`). */
export function checkFeedId(endpoint: string, id: unknown): string {
  if (typeof id !== 'string' || !schemas.hexString.safeParse(id).success) {
    throw new UpstreamInvalidArgumentError(endpoint, `feed id is not a hex string: ${show(id)}`);
  }
  return id;
}

/** A market UUID, or an exchange address (hex), as `GET /api/markets/:id` accepts. */
export function checkMarketIdOrAddress(endpoint: string, id: unknown): string {
  if (typeof id === 'string' && schemas.hexString.safeParse(id).success) return id;
  return checkMarketId(endpoint, id);
}
