/**
 * @module errors
 * One error base class with a stable code (the protocol's error codes, shared/protocol.md "Error
 * codes"), so that any failure inside the relay maps to what a client is told without a lookup
 * table at each call site. Subclasses carry default messages and chain `cause`.
 */
import type { ErrorCode } from './protocol/messages.ts';

export class RelayError extends Error {
  override name = 'RelayError';
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** A configuration value that cannot be used; the CLI prints it as one line and exits 2. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  readonly option: string;

  constructor(option: string, message: string) {
    super(`invalid --${option}: ${message}`);
    this.option = option;
  }
}
