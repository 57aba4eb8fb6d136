/**
 * @module client/events/logger
 * Where the SDK writes what it has to say in words (a stream gone stale, live again): any object
 * with `warn` and `info`, such as `console` or an application's logger (docs/client.md "Logging").
 * Silent by default: a library writes to the console of the page or program that uses it only when
 * asked to.
 */

export interface ClientLogger {
  warn(message: string): void;
  info(message: string): void;
}

/** The default logger: says nothing. */
export const silentLogger: ClientLogger = { warn: () => {}, info: () => {} };
