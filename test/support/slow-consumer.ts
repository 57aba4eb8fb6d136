/**
 * @module test/support/slow-consumer
 * Making a relay hold a connection back, for the slow-consumer tests: a small high-water mark and
 * no request rate limit, and a way to fill a paused connection's socket.
 */

import type { Socket } from 'node:net';
import type { Relay, RelayConfig } from '../../src/relay-server.ts';
import type { SimulatorOptions } from '../../src/sim/server.ts';
import { waitFor } from './wait-for.ts';

/**
 * Harness options: 10 markets, a 64 KiB high-water mark, requests unlimited so a test can flood,
 * compression off.
 */
export function slowConsumerHarness(slowConsumerTimeoutMs = 10_000): {
  sim: SimulatorOptions;
  relay: Partial<RelayConfig>;
} {
  return {
    sim: { markets: 10 },
    relay: {
      // Plain frames: compressed snapshots are a third of the size, so filling the loopback
      // buffers would take three times the flood (and the time) for the same test of backpressure.
      compression: false,
      tuning: {
        connection: {
          highWaterBytes: 64 * 1024,
          slowConsumerTimeoutMs,
          requestsPerSecond: 100_000,
          requestBurst: 100_000,
        },
      },
    },
  };
}

/**
 * Sends repeated subscribes (each answered with a fresh snapshot per market) on a connection that
 * has stopped reading, until the relay holds it back. Loopback's kernel buffers take tens of MB
 * before Node buffers anything, so `burst` frames go out per check (a test that must see no drain
 * before the hold, and so no conflation, sends one at a time).
 */
export async function floodUntilHeldBack(
  relay: Relay,
  send: (frame: string) => void,
  markets: string[],
  burst = 50,
): Promise<void> {
  const frame = JSON.stringify({ op: 'subscribe', channel: 'book', markets });
  await waitFor(
    'the relay to hold the connection back',
    () => {
      if ([...relay.ws.connections].some((connection) => connection.isHoldingBack)) return true;
      for (let i = 0; i < burst; i++) send(frame);
      return undefined;
    },
    { timeoutMs: 20_000, everyMs: 1 },
  );
}

/** What a stalled client finds when it reads its socket again, frame by frame. */
export interface ReadBack {
  /** The close frame's code, or undefined if the connection ended without one (a reset). */
  closeCode: number | undefined;
  /** Data frames read before the close, and how many of them were compressed (RSV1). */
  frames: number;
  compressedFrames: number;
}

/**
 * Takes a paused client socket away from ws and reads it as raw WebSocket frames until the close
 * frame, skipping data frames unparsed. What the test checks is which frame ends the stream; ws
 * would inflate and parse every held-back message first (several MB through zlib and JSON in the
 * test's own process, beside the relay), work that only measures how busy the machine is. The
 * client must have been paused before any data frame arrived, so the stream starts at a frame.
 */
export function readBackToClose(socket: Socket): Promise<ReadBack> {
  socket.removeAllListeners('data');
  socket.removeAllListeners('end');
  const result: ReadBack = { closeCode: undefined, frames: 0, compressedFrames: 0 };
  let pending = Buffer.alloc(0);
  let skip = 0;
  return new Promise((resolve) => {
    const finish = (): void => {
      socket.removeAllListeners('data');
      socket.destroy();
      resolve(result);
    };
    socket.on('data', (chunk: Buffer) => {
      let buffer = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (;;) {
        if (skip > 0) {
          const skipped = Math.min(skip, buffer.length);
          skip -= skipped;
          buffer = buffer.subarray(skipped);
        }
        const header = frameHeader(buffer);
        if (skip > 0 || header === undefined) break;
        if (header.opcode === 0x8) {
          if (buffer.length < header.headerBytes + 2) break;
          result.closeCode = buffer.readUInt16BE(header.headerBytes);
          finish();
          return;
        }
        result.frames += 1;
        if (header.compressed) result.compressedFrames += 1;
        buffer = buffer.subarray(header.headerBytes);
        skip = header.payloadBytes;
      }
      pending = Buffer.from(buffer);
    });
    socket.once('close', () => resolve(result));
    socket.resume();
  });
}

function frameHeader(
  buffer: Buffer,
): { opcode: number; compressed: boolean; headerBytes: number; payloadBytes: number } | undefined {
  if (buffer.length < 2) return undefined;
  const opcode = buffer[0]! & 0x0f;
  const compressed = (buffer[0]! & 0x40) !== 0;
  const length = buffer[1]! & 0x7f;
  if (length < 126) return { opcode, compressed, headerBytes: 2, payloadBytes: length };
  if (length === 126) {
    if (buffer.length < 4) return undefined;
    return { opcode, compressed, headerBytes: 4, payloadBytes: buffer.readUInt16BE(2) };
  }
  if (buffer.length < 10) return undefined;
  return { opcode, compressed, headerBytes: 10, payloadBytes: Number(buffer.readBigUInt64BE(2)) };
}
