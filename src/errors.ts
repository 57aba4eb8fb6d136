/**
 * @module errors
 * One error base class with a stable code (the protocol's error codes, docs/protocol.md "Error
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

/**
 * A command line or configuration value that cannot be used: `message` is the one line the CLI
 * prints (naming the option, what was given and what is expected) before exiting with code 2.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
  /** The option concerned as the flag is spelt (`port`), or `command` / `arguments`. */
  readonly option: string;

  constructor(option: string, message: string) {
    super(message);
    this.option = option;
  }
}
