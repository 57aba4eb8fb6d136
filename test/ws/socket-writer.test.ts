/**
 * The send path below the protocol (ws/socket-writer.ts) over a real loopback socket: a write the
 * kernel takes at once asks Node for no callback; one it does not take is followed by an empty
 * write whose callback releases what waited behind it (the backlog, in one write) and tells a
 * waiting session that everything has left.
 */
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { SocketWriter } from '../../src/ws/socket-writer.ts';
import { WriteCoalescer } from '../../src/ws/write-coalescer.ts';
import { waitFor } from '../support/wait-for.ts';

/** Larger than the loopback socket's send and receive buffers together: the kernel cannot take it all. */
const PAST_THE_KERNEL = 32 * 1024 * 1024;

describe('SocketWriter on a loopback socket', () => {
  const opened: { server: Server; sockets: Socket[] }[] = [];

  afterEach(async () => {
    for (const { server, sockets } of opened.splice(0)) {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  /** The relay's end of a connection, recording its socket writes, and a reader that starts paused. */
  async function connected() {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    const reader = connect(port, '127.0.0.1');
    reader.pause();
    const [[relayEnd]] = (await Promise.all([once(server, 'connection'), once(reader, 'connect')])) as [
      [Socket],
      unknown,
    ];
    opened.push({ server, sockets: [relayEnd, reader] });

    const writes: { bytes: number; withCallback: boolean }[] = [];
    const write = relayEnd.write.bind(relayEnd) as (wire: Buffer, done?: () => void) => boolean;
    relayEnd.write = ((wire: Buffer, done?: () => void) => {
      writes.push({ bytes: wire.length, withCallback: done !== undefined });
      return write(wire, done);
    }) as Socket['write'];

    let drains = 0;
    const ws = { readyState: WebSocket.OPEN } as unknown as WebSocket;
    const writer = new SocketWriter(ws, relayEnd, new WriteCoalescer(0), {
      maxBufferBytes: 4 * PAST_THE_KERNEL,
      onOverflow: () => undefined,
      onDrained: () => {
        drains += 1;
      },
      highWaterBytes: 64 * 1024,
    });

    const received: Buffer[] = [];
    reader.on('data', (chunk: Buffer) => received.push(chunk));
    const receivedBytes = () => received.reduce((sum, chunk) => sum + chunk.length, 0);
    return { writer, writes, reader, received, receivedBytes, drains: () => drains };
  }

  it('asks for no callback for writes the kernel takes at once', async () => {
    const { writer, writes, reader, receivedBytes } = await connected();
    for (let i = 0; i < 10; i++) writer.write(Buffer.alloc(500, i));
    expect(writes).toEqual(Array.from({ length: 10 }, () => ({ bytes: 500, withCallback: false })));
    expect(writer.bufferedBytes).toBe(0);
    reader.resume();
    await waitFor('every byte read', () => receivedBytes() === 5_000);
  });

  it('holds what follows a write the kernel has not taken, and sends it in one write once that has left', async () => {
    const { writer, writes, reader, received, receivedBytes, drains } = await connected();
    writer.write(Buffer.alloc(PAST_THE_KERNEL, 1));
    // Node still holds most of it: an empty write follows, for its callback.
    expect(writes).toEqual([
      { bytes: PAST_THE_KERNEL, withCallback: false },
      { bytes: 0, withCallback: true },
    ]);
    writer.write(Buffer.alloc(100, 2));
    writer.write(Buffer.alloc(200, 3));
    expect(writes).toHaveLength(2);
    expect(writer.bufferedBytes).toBeGreaterThanOrEqual(300);

    // A session holding back waits on the drain from here on.
    writer.drainWaiters = 1;
    reader.resume();
    await waitFor('the drain after the backlog has left', () => drains() >= 1);
    expect(writes.slice(2)).toEqual([{ bytes: 300, withCallback: true }]);
    await waitFor('every byte read', () => receivedBytes() === PAST_THE_KERNEL + 300);
    const tail = Buffer.concat(received).subarray(PAST_THE_KERNEL);
    expect([tail[0], tail[99], tail[100], tail[299]]).toEqual([2, 2, 3, 3]);
    expect(writer.counts).toEqual({ frames: 3, writes: 2 });
  });
});
