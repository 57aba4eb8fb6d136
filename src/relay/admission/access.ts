/**
 * @module relay/admission/access
 * Who may open streams, the same rule for every transport (docs/protocol.md "Access control"): an
 * API key by `Authorization: Bearer` header or `?token=`, and an optional origin allow-list (the
 * relay's own origin, the status page it serves, is always allowed).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { bearerToken, isOneOf } from '../../util/secrets.ts';

export interface AccessPolicy {
  apiKeys?: readonly string[];
  allowedOrigins?: readonly string[];
}

export interface Refusal {
  status: 401 | 403;
  error: string;
  message: string;
}

/** protocol.md "Transport": 401 without a valid key, 403 for an origin not on the allow-list. Refusals never echo the request. */
export function authorize(
  headers: IncomingHttpHeaders,
  url: URL,
  options: AccessPolicy,
): Refusal | undefined {
  const { apiKeys } = options;
  if (!isOriginAllowed(headers, options)) {
    return { status: 403, error: 'forbidden', message: 'this origin is not allowed' };
  }
  if (apiKeys !== undefined) {
    const key = presentedKey(headers, url);
    if (key === undefined || !isOneOf(apiKeys, key)) {
      return { status: 401, error: 'unauthorized', message: 'a valid API key is required' };
    }
  }
  return undefined;
}

/**
 * Whether a request's `Origin` may use the relay: always without an allow-list or an `Origin`
 * header (non-browser clients), and the relay's own origin always.
 */
export function isOriginAllowed(headers: IncomingHttpHeaders, options: AccessPolicy): boolean {
  const { allowedOrigins } = options;
  const origin = headers.origin;
  return (
    allowedOrigins === undefined ||
    origin === undefined ||
    allowedOrigins.includes(origin) ||
    isOwnOrigin(origin, headers.host)
  );
}

export function presentedKey(headers: IncomingHttpHeaders, url: URL): string | undefined {
  return bearerToken(headers.authorization) ?? url.searchParams.get('token') ?? undefined;
}

/** A page this relay served (the status page) connecting back to the host it came from. */
function isOwnOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    return new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}
