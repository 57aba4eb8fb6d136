/**
 * @module test/support/clients/sse-client
 * A plain SSE client for relay tests, on Node's fetch: it reads the event stream with the SDK's one
 * SSE reader (packages/client/src/connection/event-stream.ts), keeps the last event id as a browser's
 * EventSource would, and records the messages like the WebSocket test client. `drop()` cuts the
 * connection the way a network failure would.
 */
import { readEventStream } from '../../../packages/client/src/connection/event-stream.ts';
import { waitFor } from '../wait-for.ts';
import { type Message, MessageRecorder } from './message-recorder.ts';

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
    for await (const item of readEventStream(body)) {
      if (item.kind === 'comment') {
        this.comments.push(item.text.trim());
        continue;
      }
      if (item.id !== undefined) this.lastEventId = item.id;
      this.ids.push(item.id);
      this.record(JSON.parse(item.data) as Message);
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
