/**
 * @module test/support/sse-client
 * A plain SSE reader for relay tests, on Node's fetch: it parses the event stream itself (the
 * `text/event-stream` rules: `id:`, `data:`, comment lines, a blank line ends an event), keeps the
 * last event id as a browser's EventSource would, and records the messages like the WebSocket test
 * client. `drop()` cuts the connection the way a network failure would.
 */
import { type Message, MessageRecorder } from './message-recorder.ts';
import { waitFor } from './wait-for.ts';

export class SseClient extends MessageRecorder {
  /** The id of the last event that carried one: what a browser sends back as `Last-Event-ID`. */
  lastEventId: string | undefined;
  readonly comments: string[] = [];
  /** The event id that came with each recorded message (undefined for events without one). */
  readonly ids: (string | undefined)[] = [];
  status = 0;
  ended = false;
  readonly #abort = new AbortController();
  #done: Promise<void> = Promise.resolve();

  static async connect(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const client = new SseClient();
    const response = await fetch(url, { headers, signal: client.#abort.signal });
    client.status = response.status;
    if (response.body === null || response.status !== 200) return client;
    client.#done = client.#read(response.body).catch(() => undefined);
    return client;
  }

  async #read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    let id: string | undefined;
    let data: string[] = [];
    const reader = body.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      buffer += decoder.decode(read.value, { stream: true });
      for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line === '') {
          if (id !== undefined) this.lastEventId = id;
          if (data.length > 0) {
            this.ids.push(id);
            this.record(JSON.parse(data.join('\n')) as Message);
          }
          id = undefined;
          data = [];
        } else if (line.startsWith(':')) {
          this.comments.push(line.slice(1).trim());
        } else if (line.startsWith('id: ')) {
          id = line.slice(4);
        } else if (line.startsWith('data: ')) {
          data.push(line.slice(6));
        }
      }
    }
    this.ended = true;
  }

  /** Waits for the relay to end the response. */
  async closedByRelay(): Promise<void> {
    await waitFor('the relay to end the response', () => this.ended);
  }

  async drop(): Promise<void> {
    this.#abort.abort();
    await this.#done;
  }

  close(): Promise<void> {
    return this.drop();
  }
}
