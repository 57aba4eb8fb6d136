/**
 * @module util/secrets
 * Presented credentials: the `Authorization: Bearer` scheme (case-insensitive, RFC 9110 §11.1) and
 * a constant-time comparison, shared by the WebSocket endpoint's API keys and the operator key.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** The token of an `Authorization: Bearer <token>` header, whatever the scheme's case. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1];
}

/**
 * Whether `given` is one of `secrets`, in time that reveals neither how much of a secret matched
 * nor its length: both sides are hashed to 32 bytes first, and every candidate is compared.
 */
export function isOneOf(secrets: readonly string[], given: string): boolean {
  const presented = sha256(given);
  let found = false;
  for (const secret of secrets) found = timingSafeEqual(sha256(secret), presented) || found;
  return found;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
