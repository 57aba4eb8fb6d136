/**
 * @module upstream/outcome
 * What one attempt amounts to: a body validated against its zod schema, or a typed UpstreamError
 * with whether it is worth retrying. Pure: the transport does the sending, waiting and reporting.
 */
import type { z } from 'zod';
import type { ErrorCode } from '../protocol/messages.ts';
import {
  type SchemaIssue,
  type UpstreamError,
  UpstreamHttpError,
  UpstreamSchemaError,
  UpstreamTimeoutError,
} from './errors.ts';
import type { Exchange, HttpRequest } from './exchange.ts';
import { retryAfterMs } from './retry-policy.ts';
import * as schemas from './schemas.ts';

export interface UpstreamRequest<T> extends HttpRequest {
  schema: z.ZodType<T>;
  /** Protocol code for a 404 when the endpoint is not about one market (default `unknown_market`). */
  notFoundCode?: ErrorCode;
}

export type Outcome = 'ok' | 'http_error' | 'timeout' | 'network_error' | 'schema_error' | 'rate_limited';

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
 * Network errors, timeouts and 5xx are retryable, a 429 after its Retry-After (capped at
 * `maxRetryAfterMs`); other 4xx and bodies that break the schema are final.
 */
export function judgeExchange<T>(
  request: UpstreamRequest<T>,
  exchange: Exchange,
  maxRetryAfterMs: number,
  nowMs: number,
): Attempt<T> {
  if (exchange.kind === 'failed') {
    const outcome = exchange.error instanceof UpstreamTimeoutError ? 'timeout' : 'network_error';
    return { ok: false, outcome, error: exchange.error, retryable: true };
  }
  const { status, text } = exchange;
  if (status >= 200 && status < 300) return validateBody(request, text, status);
  const error = new UpstreamHttpError(request.endpoint, status, {
    detail: upstreamErrorText(text),
    code: status === 404 ? request.notFoundCode : undefined,
  });
  if (status === 429) {
    const waitMs = retryAfterMs(exchange.retryAfter, nowMs, maxRetryAfterMs);
    return { ok: false, outcome: 'rate_limited', status, error, retryable: true, retryAfterMs: waitMs };
  }
  return { ok: false, outcome: 'http_error', status, error, retryable: status >= 500 };
}

function validateBody<T>(request: UpstreamRequest<T>, text: string, status: number): Attempt<T> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    const error = new UpstreamSchemaError(request.endpoint, [{ path: '', message: 'invalid JSON' }], {
      cause,
    });
    return { ok: false, outcome: 'schema_error', status, error, retryable: false };
  }
  const parsed = request.schema.safeParse(json);
  if (!parsed.success) {
    const issues: SchemaIssue[] = parsed.error.issues.map((issue) => ({
      path: issue.path.map(String).join('.'),
      message: issue.message,
    }));
    const error = new UpstreamSchemaError(request.endpoint, issues);
    return { ok: false, outcome: 'schema_error', status, error, retryable: false };
  }
  return { ok: true, outcome: 'ok', status, value: parsed.data };
}

/** The error body's shape is not shown upstream; the simulator's `{success:false,error}` is used when present. */
function upstreamErrorText(text: string): string | undefined {
  try {
    const parsed = schemas.errorBody.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.error.slice(0, 200) : undefined;
  } catch {
    return undefined;
  }
}
