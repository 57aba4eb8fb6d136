/**
 * @module client/events/client-error
 * The one error type the SDK reports through `error` events: a stable `code` to switch on (the
 * relay's protocol error codes plus the SDK's own), the message for people, the cause chained.
 */
import type { ErrorCode, RequestId } from '../../../protocol/src/protocol/messages.ts';

export type ClientErrorCode =
  /** An `error` message from the relay (protocol.md "Error codes"). */
  | ErrorCode
  /** A frame the SDK could not read; the stream it named (if any) is resynced. */
  | 'malformed_frame'
  /**
   * A compact data message named a stream number no `subscribed` announced on this connection
   * (protocol.md "Compact encoding"); it was ignored.
   */
  | 'unknown_stream'
  /** The socket failed or could not connect; the SDK retries with backoff. */
  | 'connection_failed'
  /** The relay refused the upgrade (HTTP 401/403) or closed with 1008: the SDK stops retrying. */
  | 'refused'
  /**
   * No relay has accepted a connection since the client started, in `reportUnreachableAfter`
   * attempts: a wrong URL, a relay down, or (a browser hides the HTTP answer) a refused origin or
   * key. The SDK goes on retrying; one-off questions such as `markets()` stop waiting.
   */
  | 'unreachable'
  /**
   * The history export refused the request (`relay.history()`; docs/history.md "Errors"): the
   * message gives the HTTP status and the relay's `error` code (`history_off`, `out_of_retention` ...).
   */
  | 'history_refused'
  /** An application listener threw; the SDK carried on. */
  | 'listener_threw';

export class RelayClientError extends Error {
  override readonly name = 'RelayClientError';
  readonly code: ClientErrorCode;
  readonly channel: string | undefined;
  readonly market: string | undefined;
  readonly requestId: RequestId | undefined;

  constructor(
    code: ClientErrorCode,
    message: string,
    details: { cause?: unknown; channel?: string; market?: string; requestId?: RequestId } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.channel = details.channel;
    this.market = details.market;
    this.requestId = details.requestId;
  }
}
