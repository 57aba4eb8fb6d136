/**
 * @module relay/session/arrival
 * A client arriving, whatever its transport (docs/operations.md "Edge limits", "Refusals"): access
 * (the origin allow-list, the API key with its throttle: relay/admission/edge-gate.ts) and the
 * connection rate of its address; then, when the transport is ready to answer its own way, the
 * connection caps (the relay's, per address, per API key); and once admitted, its place in the
 * per-address and per-key counts until it leaves. Every refusal is an `edge:refused` event. The
 * transports only answer the verdicts: an HTTP error, or a close code after a WebSocket upgrade.
 */
import type { IncomingMessage } from 'node:http';
import type { AccessPolicy } from '../admission/access.ts';
import { type EdgeAdmission, type EdgeClient, edgeClient } from '../admission/edge.ts';
import { gateAccess } from '../admission/edge-gate.ts';
import type { RefusalReason, RelayEvents } from '../events.ts';

export interface ArrivalContext extends AccessPolicy {
  /** The per-address and per-key counters, shared by every transport. */
  admission: EdgeAdmission;
  events: RelayEvents;
  /** Proxies in front of the relay that append to X-Forwarded-For. */
  trustedProxyDepth: number;
}

/** An HTTP answer to a client refused before any transport exists, `delayMs` later. */
export interface HttpRefusal {
  status: number;
  error: string;
  message: string;
  headers: Record<string, string>;
  delayMs: number;
}

/** The client with what the per-address and per-key caps said, for `capOf` to judge. */
export interface ArrivedClient extends EdgeClient {
  verdict: 'ok' | 'address' | 'key';
}

export type Arrival = { ok: false; refusal: HttpRefusal } | { ok: true; client: ArrivedClient };

/** Access, then the connection rate of the client's address (`url` is the request's, parsed). */
export function arrive(request: IncomingMessage, url: URL, context: ArrivalContext): Arrival {
  const { admission } = context;
  const client = edgeClient(request, url, context);
  const denied = gateAccess(request.headers, url, context, admission, client.address);
  if (denied !== undefined) {
    refused(context, denied.reason, client.address, denied.lockedOut);
    const retryAfter = denied.retryAfterSeconds;
    return {
      ok: false,
      refusal: {
        status: denied.status,
        error: denied.error,
        message: denied.message,
        headers: retryAfter === undefined ? {} : { 'Retry-After': String(retryAfter) },
        // A wrong key past the free failures waits, so that guessing in sequence slows down.
        delayMs: denied.delayMs,
      },
    };
  }
  const verdict = admission.admitConnection(client.address, client.key);
  if (verdict === 'rate') {
    refused(context, 'rate', client.address);
    return {
      ok: false,
      refusal: {
        status: 429,
        error: 'too_many_requests',
        message: 'too many new connections from this address; retry later',
        headers: { 'Retry-After': '1' },
        delayMs: 0,
      },
    };
  }
  return { ok: true, client: { ...client, verdict } };
}

/** Which connection cap refuses the client (the relay's first), if any. */
export function capOf(
  client: ArrivedClient,
  atGlobalCap: boolean,
  context: ArrivalContext,
): 'global' | 'address' | 'key' | undefined {
  const cap = atGlobalCap ? 'global' : client.verdict === 'ok' ? undefined : client.verdict;
  if (cap !== undefined) refused(context, cap, client.address);
  return cap;
}

/** Counts an admitted client's connection; the function returned uncounts it (once). */
export function seat(client: EdgeClient, context: ArrivalContext): () => void {
  context.admission.opened(client.address, client.key);
  let left = false;
  return () => {
    if (left) return;
    left = true;
    context.admission.closed(client.address, client.key);
  };
}

function refused(context: ArrivalContext, reason: RefusalReason, address: string, lockedOut?: boolean): void {
  const group = context.admission.group(address);
  context.events.emit('edge:refused', { reason, address: group, ...(lockedOut ? { lockedOut } : {}) });
}
