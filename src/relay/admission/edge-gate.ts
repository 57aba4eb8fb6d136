/**
 * @module relay/admission/edge-gate
 * Access control at the edge with its throttle (docs/operations.md "Refusals"): the origin allow-list
 * and the API key (relay/admission/access.ts), with wrong keys counted per address group
 * (relay/admission/auth-throttle.ts), the same for every transport; and the operator key of the operator
 * endpoints, counted the same way in a throttle of its own. The endpoints answer the decision.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isOneOf } from '../../util/secrets.ts';
import type { RefusalReason } from '../events.ts';
import { type AccessPolicy, authorize } from './access.ts';
import type { AuthThrottle } from './auth-throttle.ts';
import type { EdgeAdmission } from './edge.ts';

/** A request refused for its key: its HTTP answer and how long to wait before answering. */
export interface KeyRefusal {
  status: 401 | 403 | 429;
  error: string;
  message: string;
  /** Seconds for `Retry-After` (a lockout). */
  retryAfterSeconds?: number;
  /** A wrong key past the free failures is answered this much later. */
  delayMs: number;
  /** This failure locked its address group out. */
  lockedOut: boolean;
}

/** A refused stream connection, with why (for metrics). */
export interface AccessRefusal extends KeyRefusal {
  reason: RefusalReason;
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
  const locked = lockout(admission.auth, group, 'too many wrong API keys from this address; retry later');
  if (locked !== undefined) return { ...locked, reason: 'auth_lockout' };
  const refusal = authorize(headers, url, { apiKeys });
  if (refusal === undefined) return undefined;
  const { delayMs, lockedOut } = admission.auth.failed(group);
  return { ...refusal, reason: 'auth', delayMs, lockedOut };
}

/**
 * The operator key `presented` (undefined: none) from `address`: a missing or wrong one counts
 * against the address group, and a locked-out group is refused without the key being compared.
 */
export function gateOperatorKey(
  presented: string | undefined,
  operatorKey: string,
  admission: EdgeAdmission,
  address: string,
): KeyRefusal | undefined {
  const group = admission.group(address);
  const locked = lockout(
    admission.operatorAuth,
    group,
    'too many wrong operator keys from this address; retry later',
  );
  if (locked !== undefined) return locked;
  if (presented !== undefined && isOneOf([operatorKey], presented)) return undefined;
  const { delayMs, lockedOut } = admission.operatorAuth.failed(group);
  return { status: 401, error: 'unauthorized', message: 'an operator key is required', delayMs, lockedOut };
}

function lockout(throttle: AuthThrottle, group: string, message: string): KeyRefusal | undefined {
  const verdict = throttle.verdict(group);
  if (verdict.kind !== 'locked') return undefined;
  return {
    status: 429,
    error: 'too_many_requests',
    message,
    retryAfterSeconds: Math.ceil(verdict.retryAfterMs / 1000),
    delayMs: 0,
    lockedOut: false,
  };
}
