/**
 * @module test/support/clients/sse
 * Reads Server-Sent Events from a fetch body, one `{ event, data }` per named event, through the
 * SDK's one SSE reader (packages/client/src/connection/event-stream.ts).
 */
import { readEventStream } from '../../../packages/client/src/connection/event-stream.ts';

export async function* sseEvents(response: Response): AsyncGenerator<{ event: string; data: string }> {
  for await (const item of readEventStream(response.body!)) {
    if (item.kind === 'event' && item.event !== undefined) yield { event: item.event, data: item.data };
  }
}
