/**
 * @module test/support/replay-client
 * For the replay tests (docs/protocol.md "Replay"): a relay recording into a temporary folder
 * against a simulator, and a plain WebSocket client that keeps every message's text and parsed
 * form, so a test compares replayed messages with what was sent live, byte for byte.
 */

import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import type { RecordedMessage } from '../../src/history/store.ts';
import type { Relay, RelayConfig } from '../../src/relay-server.ts';
import type { SimulatorHandle } from '../../src/sim/server.ts';
import { startHarnessRelay } from './harness.ts';
import { waitFor } from './wait-for.ts';

export interface Received {
  text: string;
  /** performance.now() when it arrived. */
  at: number;
  message: { type: string; id?: unknown; replay?: unknown; [field: string]: unknown };
}

export class TextClient {
  readonly received: Received[] = [];
  /** The same by type: waiting for one answer must not scan every stream message (the relay shares this process). */
  readonly #byType = new Map<string, Received[]>();
  closeCode: number | undefined;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const text = data.toString();
      const received = { text, at: performance.now(), message: JSON.parse(text) as Received['message'] };
      this.received.push(received);
      const ofType = this.#byType.get(received.message.type);
      if (ofType === undefined) this.#byType.set(received.message.type, [received]);
      else ofType.push(received);
    });
    ws.on('close', (code) => {
      this.closeCode = code;
    });
  }

  static async connect(relay: Pick<Relay, 'url'>): Promise<TextClient> {
    const ws = new WebSocket(`${relay.url.replace('http', 'ws')}/v1/ws`, { perMessageDeflate: false });
    await once(ws, 'open');
    return new TextClient(ws);
  }

  send(request: object): void {
    this.ws.send(JSON.stringify(request));
  }

  /** Messages of `type` (and, when given, whose `id` is `id`). */
  of(type: string, id?: unknown): Received[] {
    return (this.#byType.get(type) ?? []).filter(({ message }) => id === undefined || message.id === id);
  }

  /** Stream messages of the replay `id`, or live ones (no `replay` field) when `id` is undefined. */
  stream(id?: unknown): Received[] {
    return this.received.filter(
      ({ message }) => (message.type === 'snapshot' || message.type === 'update') && message.replay === id,
    );
  }

  /** The one answer of type `type` to the request `id`, waited for. */
  answer(type: string, id: unknown, timeoutMs = 8_000): Promise<Received['message']> {
    return waitFor(`${type} ${JSON.stringify(id)}`, () => this.of(type, id)[0]?.message, { timeoutMs });
  }

  close(): void {
    this.ws.close();
  }
}

/** A temporary data folder and a relay recording into it (call `remove` after closing the relay). */
export function recordingFolder(prefix: string): { dataDir: string; remove(): void } {
  const dataDir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dataDir, remove: () => rmSync(dataDir, { recursive: true, force: true }) };
}

export function startRecordingRelay(
  sim: SimulatorHandle,
  dataDir: string,
  relay: Partial<RelayConfig> = {},
): Promise<Relay> {
  return startHarnessRelay(sim, {
    history: { store: 'embedded', dataDir, retentionMs: 3_600_000, maxBytes: 1024 ** 3 },
    ...relay,
  });
}

/** `count` recorded book updates of one stream, one every `stepMs` from `start`, in one epoch. */
export function syntheticBook(
  market: string,
  count: number,
  start: number,
  stepMs: number,
): RecordedMessage[] {
  return Array.from({ length: count }, (_, i) => {
    const at = new Date(start + i * stepMs).toISOString();
    return {
      channel: 'book',
      stream: `book:${market}:full`,
      market,
      depth: null,
      epoch: 'synthetic',
      seq: i + 1,
      ts: at,
      rts: at,
      type: i === 0 ? 'snapshot' : 'update',
      data:
        i === 0
          ? '{"bids":[["0.5","10"]],"asks":[["0.6","10"]]}'
          : `{"bids":[["0.5","${10 + i}"]],"asks":[]}`,
      checksum: undefined,
    };
  });
}
