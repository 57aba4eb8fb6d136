/**
 * @module client/connection/event-stream
 * Reads a `text/event-stream` body (protocol.md "Server-Sent Events") as its events and comment
 * lines, in the order they came. The parsing itself is `eventsource-parser`'s (the WHATWG rules:
 * line endings, the one space after a colon, events without data dropped); this module only feeds
 * it a fetch body. It is the one SSE reader of the SDK (`sse-socket.ts`) and of the relay's tests.
 */
import { createParser } from 'eventsource-parser';

/** One event: its `id:` and `event:` fields when it had them, its `data:` lines joined by `\n`. */
export interface EventStreamEvent {
  kind: 'event';
  id: string | undefined;
  event: string | undefined;
  data: string;
}

/** One comment line (`: text`), without the colon and the space after it. */
export interface EventStreamComment {
  kind: 'comment';
  text: string;
}

export type EventStreamItem = EventStreamEvent | EventStreamComment;

/** Ends when the body does; throws what reading the body throws (an abort, a lost connection). */
export async function* readEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<EventStreamItem> {
  const parsed: EventStreamItem[] = [];
  const parser = createParser({
    onEvent: ({ id, event, data }) => parsed.push({ kind: 'event', id, event, data }),
    onComment: (text) => parsed.push({ kind: 'comment', text }),
  });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    parser.feed(decoder.decode(read.value, { stream: true }));
    yield* parsed.splice(0);
  }
}
