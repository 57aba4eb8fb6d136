/**
 * @module relay/access
 * Who may open streams, the same rule for every transport (docs/protocol.md "Access control"): an
 * API key by `Authorization: Bearer` header or `?token=`, and an optional origin allow-list.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export interface AccessPolicy {
  apiKeys?: readonly string[];
  allowedOrigins?: readonly string[];
}

export interface Refusal {
  status: 401 | 403;
  error: string;
  message: string;
}

/** protocol.md "Transport": 401 without a valid key, 403 for an origin not on the allow-list. */
export function authorize(
  headers: IncomingHttpHeaders,
  url: URL,
  options: AccessPolicy,
): Refusal | undefined {
  const { apiKeys, allowedOrigins } = options;
  const origin = headers.origin;
  if (allowedOrigins !== undefined && origin !== undefined && !allowedOrigins.includes(origin)) {
    return { status: 403, error: 'forbidden', message: `origin ${origin} is not allowed` };
  }
  if (apiKeys !== undefined) {
    const key = presentedKey(headers, url);
    if (key === undefined || !apiKeys.some((candidate) => sameSecret(candidate, key))) {
      return { status: 401, error: 'unauthorized', message: 'a valid API key is required' };
    }
  }
  return undefined;
}

function presentedKey(headers: IncomingHttpHeaders, url: URL): string | undefined {
  const header = headers.authorization;
  if (header?.startsWith('Bearer ')) return header.slice('Bearer '.length).trim();
  return url.searchParams.get('token') ?? undefined;
}

/**
 * Constant-time comparison, so response timing reveals neither how much of a key matched nor its
 * length: both sides are hashed to 32 bytes first, so there is no early return on a length difference.
 */
function sameSecret(expected: string, given: string): boolean {
  return timingSafeEqual(sha256(expected), sha256(given));
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
