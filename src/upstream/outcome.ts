/**
 * @module upstream/outcome
 * What one attempt amounts to: a body validated against its zod schema, or a typed UpstreamError
 * with whether it is worth retrying. The transport does the sending, waiting and reporting; the
 * only state here is the caller's ResponseMemo, when it gives one.
 */
import type { z } from 'zod';
import type { ErrorCode } from '../../packages/protocol/src/protocol/messages.ts';
import { compiledCheck } from './compiled-check.ts';
import {
  type SchemaIssue,
  UpstreamDecodeError,
  type UpstreamError,
  UpstreamHttpError,
  UpstreamInvalidJsonError,
  UpstreamSchemaError,
  UpstreamTimeoutError,
} from './errors.ts';
import type { Exchange, HttpRequest } from './exchange.ts';
import { retryAfterMs } from './rate-gate.ts';

export interface UpstreamRequest<T> extends HttpRequest {
  schema: z.ZodType<T>;
  /**
   * The schema's compiled check (compiled-check.ts), made once per endpoint row (on its first
   * request) so that no answer looks it up; without it, the answer's check is looked up by its schema.
   */
  check?: ((value: unknown) => value is T) | undefined;
  /** Protocol code for a 404 when the endpoint is not about one market (default `unknown_market`). */
  notFoundCode?: ErrorCode;
}

export type Outcome =
  | 'ok'
  | 'http_error'
  | 'timeout'
  | 'network_error'
  | 'decode_error'
  | 'invalid_json'
  | 'schema_error'
  | 'rate_limited';

export type Attempt<T> =
  | { ok: true; outcome: 'ok'; status: number; value: T }
  | {
      ok: false;
      outcome: Exclude<Outcome, 'ok'>;
      status?: number;
      error: UpstreamError;
      retryable: boolean;
      retryAfterMs?: number;
    };

/**
 * The last body one caller's requests were answered with, and the value it validated to. A poll
 * target keeps one: when upstream answers with the same bytes again, the call resolves to the very
 * same value without parsing or validating (it was validated when first seen), and the caller can
 * tell "unchanged" by identity. A body that differs by one byte is parsed and validated as any
 * other; one that breaks the schema is never remembered, so it fails every time it comes.
 */
export class ResponseMemo<T> {
  #body: Buffer | undefined;
  #value: T | undefined;

  /** The value `body` validated to, when it is byte for byte the last body remembered. */
  recall(body: Buffer): T | undefined {
    return this.#body?.equals(body) ? this.#value : undefined;
  }

  remember(body: Buffer, value: T): void {
    this.#body = body;
    this.#value = value;
  }

  /**
   * Keeps `standIn` instead of `value` (when `value` is the one remembered): recall answers the same
   * body with the stand-in from now on. For a caller that takes what it needs from a large value at
   * once: a value kept until the next poll outlives V8's young generation, and a book's hundreds of
   * parsed orders then cost the collector more than their parse did. The caller recognises its
   * stand-in by identity and, when it needs the whole value after all, has `reparse()`.
   */
  keep(value: T, standIn: T): void {
    if (this.#value === value) this.#value = standIn;
  }

  /**
   * The remembered body parsed again: the value it validated to when remembered (a body the compiled
   * check accepts is used as parsed), without validating it again.
   */
  reparse(): T | undefined {
    return this.#body === undefined ? undefined : (JSON.parse(this.#body.toString('utf8')) as T);
  }
}

/** How a caller wants its 2xx bodies read, beyond parsing and validating them. */
export interface BodyReading<T> {
  /** The caller's memo of its last body: an identical body resolves to the value remembered. */
  memo?: ResponseMemo<T>;
  /**
   * The caller's own reader, tried before `JSON.parse`: a value for the body, or undefined to read
   * it the general way. It must answer only bodies the schema accepts, with what the caller would
   * make of the validated body (a stand-in it recognises is fine: the memo's `reparse` still gives
   * the body as parsed).
   */
  read?: (body: Buffer) => T | undefined;
}

/**
 * Network errors, timeouts and 5xx are retryable, a 429 after its Retry-After (capped at
 * `maxRetryAfterMs`); 3xx (never followed), other 4xx and 2xx bodies that cannot be decoded, are
 * not JSON or break the schema are final. With a `memo`, a 2xx body identical to the last one
 * remembered resolves to the value remembered.
 */
export function judgeExchange<T>(
  request: UpstreamRequest<T>,
  exchange: Exchange,
  maxRetryAfterMs: number,
  nowMs: number,
  { memo, read }: BodyReading<T> = {},
): Attempt<T> {
  if (exchange.kind === 'failed') {
    const outcome = exchange.error instanceof UpstreamTimeoutError ? 'timeout' : 'network_error';
    return { ok: false, outcome, error: exchange.error, retryable: true };
  }
  const { status, body } = exchange;
  if (exchange.viaRelay) {
    // Another relay is not upstream: its data must not pass for upstream's (nor its 404s for markets gone).
    const error = new UpstreamHttpError(request.endpoint, status, {
      detail: 'answered by another market-relay (Via), not upstream',
      code: 'upstream_unavailable',
    });
    return { ok: false, outcome: 'http_error', status, error, retryable: false };
  }
  if (status >= 200 && status < 300) {
    if (exchange.undecodable !== undefined) {
      const error = new UpstreamDecodeError(request.endpoint, exchange.undecodable);
      return { ok: false, outcome: 'decode_error', status, error, retryable: false };
    }
    const known = memo?.recall(body);
    if (known !== undefined) return { ok: true, outcome: 'ok', status, value: known };
    const value = read?.(body);
    if (value !== undefined) {
      memo?.remember(body, value);
      return { ok: true, outcome: 'ok', status, value };
    }
    const result = validateBody(request, body.toString('utf8'), status);
    if (result.ok) memo?.remember(body, result.value);
    return result;
  }
  const waitMs = status === 429 ? retryAfterMs(exchange.retryAfter, nowMs, maxRetryAfterMs) : undefined;
  const error = new UpstreamHttpError(request.endpoint, status, {
    detail: exchange.location === undefined ? bodyExcerpt(exchange) : `redirect to ${exchange.location}`,
    ...(status === 404 && request.notFoundCode !== undefined ? { code: request.notFoundCode } : {}),
    retryAfterMs: waitMs,
  });
  if (status === 429)
    return { ok: false, outcome: 'rate_limited', status, error, retryable: true, retryAfterMs: waitMs };
  return { ok: false, outcome: 'http_error', status, error, retryable: status >= 500 };
}

function validateBody<T>(request: UpstreamRequest<T>, text: string, status: number): Attempt<T> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    const error = new UpstreamInvalidJsonError(request.endpoint, `not JSON: ${excerpt(text)}`, { cause });
    return { ok: false, outcome: 'invalid_json', status, error, retryable: false };
  }
  // The compiled check accepts only what the schema accepts; zod runs to say what is wrong.
  const check = 'check' in request ? request.check : compiledCheck(request.schema);
  if (check?.(json)) return { ok: true, outcome: 'ok', status, value: json };
  const parsed = request.schema.safeParse(json);
  // What zod accepts and the compiled check does not is a record key `__proto__`, which zod would
  // drop unseen: refused, as a key its record does not take is (docs/upstream.md).
  if (!parsed.success || check !== undefined) {
    const issues: SchemaIssue[] = parsed.success
      ? [{ path: '', message: 'a record key named __proto__' }]
      : parsed.error.issues.map((issue) => ({
          path: issue.path.map(String).join('.'),
          message: issue.message,
        }));
    const error = new UpstreamSchemaError(request.endpoint, issues);
    return { ok: false, outcome: 'schema_error', status, error, retryable: false };
  }
  return { ok: true, outcome: 'ok', status, value: parsed.data };
}

/**
 * The start of an error body, for the log. Its shape is not shown upstream, so nothing is read
 * from it: whether a 404 means "no such market" is the relay's judgement (relay/poll/not-found.ts).
 */
function bodyExcerpt(exchange: { body: Buffer; undecodable?: string }): string {
  if (exchange.undecodable !== undefined) return exchange.undecodable;
  return excerpt(exchange.body.subarray(0, 200).toString('utf8'));
}

function excerpt(text: string): string {
  const start = text.slice(0, 200).replace(/\s+/g, ' ').trim();
  return start === '' ? 'empty body' : start;
}
