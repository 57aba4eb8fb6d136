/**
 * @module relay/edge-gate
 * Access control at the edge with its throttle (docs/operations.md "Refusals"): the origin allow-list
 * and the API key (relay/access.ts), with wrong keys counted per address group
 * (relay/auth-throttle.ts), the same for every transport. The endpoints answer the decision.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { RefusalReason } from '../events.ts';
import { type AccessPolicy, authorize } from './access.ts';
import type { EdgeAdmission } from './edge.ts';

/** A refused request: its HTTP answer, why (for metrics), and how long to wait before answering. */
export interface AccessRefusal {
  status: 401 | 403 | 429;
  error: string;
  message: string;
  reason: RefusalReason;
  /** Seconds for `Retry-After` (a lockout). */
  retryAfterSeconds?: number;
  /** A wrong key past the free failures is answered this much later. */
  delayMs: number;
  /** This failure locked its address group out. */
  lockedOut: boolean;
}

export function gateAccess(
  headers: IncomingHttpHeaders,
  url: URL,
  policy: AccessPolicy,
  admission: EdgeAdmission,
  address: string,
): AccessRefusal | undefined {
  const { apiKeys, allowedOrigins } = policy;
  const origin = authorize(headers, url, allowedOrigins === undefined ? {} : { allowedOrigins });
  if (origin !== undefined) return { ...origin, reason: 'origin', delayMs: 0, lockedOut: false };
  if (apiKeys === undefined) return undefined;
  const group = admission.group(address);
  const verdict = admission.auth.verdict(group);
  if (verdict.kind === 'locked') {
    return {
      status: 429,
      error: 'too_many_requests',
      message: 'too many wrong API keys from this address; retry later',
      reason: 'auth_lockout',
      retryAfterSeconds: Math.ceil(verdict.retryAfterMs / 1000),
      delayMs: 0,
      lockedOut: false,
    };
  }
  const refusal = authorize(headers, url, { apiKeys });
  if (refusal === undefined) return undefined;
  const { delayMs, lockedOut } = admission.auth.failed(group);
  return { ...refusal, reason: 'auth', delayMs, lockedOut };
}
