/**
 * @module upstream/errors
 * Typed failures of an upstream call, one class per way a call can fail, each naming the endpoint
 * (route template) it came from. All are RelayErrors, so a failure maps straight to a protocol error
 * code (docs/protocol.md "Error codes"); the default is `upstream_unavailable`.
 */

import type { ErrorCode } from '../../packages/protocol/src/protocol/messages.ts';

/**
 * One error base class with a stable protocol error code (docs/protocol.md "Error codes"), so that
 * any failure inside the relay maps to what a client is told without a lookup table at each call
 * site. Subclasses carry default messages and chain `cause`.
 */
export class RelayError extends Error {
  override name = 'RelayError';
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

export class UpstreamError extends RelayError {
  override name = 'UpstreamError';
  /** Route template, e.g. `GET /clob/orderbook`. */
  readonly endpoint: string;

  constructor(endpoint: string, message: string, options?: { cause?: unknown; code?: ErrorCode }) {
    super(options?.code ?? 'upstream_unavailable', `${endpoint}: ${message}`, options);
    this.endpoint = endpoint;
  }
}

/**
 * A non-2xx answer that was not (or no longer) worth retrying. A 404 on an endpoint about one
 * market carries `unknown_market` (docs/upstream.md: "404 market not found") and a 400
 * `bad_request`; the client passes another code for a 404 on an endpoint that is not about one
 * market. Whether the market really does not exist is the relay's judgement (relay/poll/not-found.ts):
 * a 404 alone may be a wrong base path.
 */
export class UpstreamHttpError extends UpstreamError {
  override name = 'UpstreamHttpError';
  readonly status: number;
  /** A 429's `Retry-After` in ms: upstream asked not to be asked again before it. */
  readonly retryAfterMs: number | undefined;

  constructor(
    endpoint: string,
    status: number,
    options?: { detail?: string; code?: ErrorCode; cause?: unknown; retryAfterMs?: number | undefined },
  ) {
    const detail = options?.detail ? `: ${options.detail}` : '';
    super(endpoint, `HTTP ${status}${detail}`, {
      cause: options?.cause,
      code: options?.code ?? defaultCodeForStatus(status),
    });
    this.status = status;
    this.retryAfterMs = options?.retryAfterMs;
  }
}

function defaultCodeForStatus(status: number): ErrorCode {
  if (status === 404) return 'unknown_market';
  if (status === 400) return 'bad_request';
  return 'upstream_unavailable';
}

/** No complete answer within the per-attempt timeout. */
export class UpstreamTimeoutError extends UpstreamError {
  override name = 'UpstreamTimeoutError';
}

/** The connection failed: refused, reset, closed mid-body, DNS, etc. */
export class UpstreamNetworkError extends UpstreamError {
  override name = 'UpstreamNetworkError';
}

export interface SchemaIssue {
  /** Dotted path of the failing field, e.g. `bids.0.price`; empty for the body itself. */
  path: string;
  message: string;
}

/**
 * A body that cannot be read at all: its `Content-Encoding` is unknown or its compressed bytes are
 * corrupt. A transfer question, not a change of upstream's data shape.
 */
export class UpstreamDecodeError extends UpstreamError {
  override name = 'UpstreamDecodeError';
}

/** A 2xx body that is not JSON (an HTML page where JSON belongs, a truncated text). */
export class UpstreamInvalidJsonError extends UpstreamError {
  override name = 'UpstreamInvalidJsonError';
}

/** A 2xx JSON body that does not match the schema of its endpoint. */
export class UpstreamSchemaError extends UpstreamError {
  override name = 'UpstreamSchemaError';
  readonly issues: SchemaIssue[];

  constructor(endpoint: string, issues: SchemaIssue[], options?: { cause?: unknown }) {
    const first = issues[0];
    const where = first === undefined ? 'invalid body' : `${first.path || '(body)'}: ${first.message}`;
    super(endpoint, where, options);
    this.issues = issues;
  }
}

/** An argument that must not reach a URL or body (not a UUID, too many ids...); thrown before any request. */
export class UpstreamInvalidArgumentError extends UpstreamError {
  override name = 'UpstreamInvalidArgumentError';

  constructor(endpoint: string, message: string) {
    super(endpoint, message, { code: 'bad_request' });
  }
}

/**
 * What a client is told about an upstream failure (a stream's `reason`, an `upstream_unavailable`
 * message): short and stable, never an address, a path or a library's words; those go to the log.
 */
export function publicReason(error: unknown): string {
  if (error instanceof UpstreamTimeoutError) return 'upstream timed out';
  if (error instanceof UpstreamNetworkError) return 'upstream unreachable';
  if (error instanceof UpstreamSchemaError) return 'upstream sent an invalid response';
  if (error instanceof UpstreamDecodeError) return 'upstream sent an undecodable response';
  if (error instanceof UpstreamInvalidJsonError) return 'upstream sent a response that is not JSON';
  if (error instanceof UpstreamHttpError) {
    if (error.status === 429) return 'upstream rate limited';
    // Not followed: an address that redirects is not upstream's API address.
    if (error.status >= 300 && error.status < 400) return 'upstream misconfigured';
    if (error.status === 404) return 'upstream misconfigured';
    if (error.status >= 500) return 'upstream error';
    return 'upstream refused the request';
  }
  return 'upstream error';
}
