/**
 * @module upstream/contract/relay-error
 * One error base class with a stable protocol error code (docs/protocol.md "Error codes"), so that
 * any failure inside the relay maps to what a client is told without a lookup table at each call
 * site. Subclasses carry default messages and chain `cause`.
 */
import type { ErrorCode } from '../../../packages/protocol/src/protocol/messages.ts';

export class RelayError extends Error {
  override name = 'RelayError';
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
