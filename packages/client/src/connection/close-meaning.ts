/**
 * @module client/connection/close-meaning
 * What a close code from the relay means, in words an application can log or show
 * (docs/protocol.md "Close codes"): the SDK adds it to its `close` event.
 */
import { closeCodes } from '../../../protocol/src/protocol/messages.ts';

const meanings: Record<number, string> = {
  1000: 'closed normally',
  [closeCodes.goingAway]: 'the relay is shutting down; reconnecting',
  [closeCodes.protocolError]: 'the client sent a frame that breaks the WebSocket protocol',
  [closeCodes.invalidPayload]: 'the client sent a text frame that is not UTF-8',
  [closeCodes.policy]: 'refused by the relay (authentication or origin)',
  [closeCodes.frameTooLarge]: 'the client sent a frame larger than the relay accepts',
  1006: 'the connection was lost without a close frame (network, or the relay dropped it)',
  [closeCodes.slowConsumer]:
    'slow consumer: this client did not read fast enough (or stopped answering pings), so the relay dropped it; read faster or subscribe to less',
  [closeCodes.tooManyConnections]: 'the relay, this address or this API key is at its connection limit',
  [closeCodes.requestFlood]: 'this client kept sending requests over its rate limit',
};

export function closeMeaning(code: number): string {
  return meanings[code] ?? `closed with code ${code}`;
}
