/**
 * Write coalescing (protocol.md "Write coalescing"): stream frames that become ready for one quiet
 * connection in one event-loop turn leave in one socket write at the turn's end, each still a
 * complete frame, in order per stream; a connection that wrote less than a window ago waits for
 * the window's end (or for HELD_BYTES_FLUSH held); `coalesceMs` 0 writes every frame on its own.
 * Counted in the connection's write path; the window's clock and timers are the test's own.
 */
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import type { ClientConnection } from '../../src/ws/client-connection.ts';
import { SocketWriter, type WriteCounts } from '../../src/ws/socket-writer.ts';
import { type CoalescedWriter, HELD_BYTES_FLUSH, WriteCoalescer } from '../../src/ws/write-coalescer.ts';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { expectedBook, type Harness, upstreamBook, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

const MARKETS = 10;

describe('write coalescing', () => {
  const { opened: clients, start } = useHarness();

  async function startWith(coalesceMs: number): Promise<{ harness: Harness; markets: string[] }> {
    // Polls slow enough that a loaded machine does not make the streams stale mid-test.
    const harness = await start({
      sim: { markets: MARKETS },
      relay: { bookPollMs: 100, tuning: { coalesceMs } },
    });
    return { harness, markets: harness.sim.market.marketIds().slice(0, MARKETS) };
  }

  async function subscribed(harness: Harness, markets: string[]): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(harness.relay.url);
    clients.push(client);
    await client.request({ op: 'subscribe', channel: 'book', markets });
    await waitFor('a snapshot of every market', () => markets.every((market) => client.view('book', market)));
    return client;
  }

  /** The relay's side of the newest connection. */
  function newestConnection(harness: Harness): ClientConnection {
    return [...harness.relay.ws.connections].at(-1)!;
  }

  /** Moves the books `ticks` times, each time waiting until `client` has caught up with upstream. */
  async function tickAndCatchUp(harness: Harness, client: ProtocolClient, markets: string[], ticks: number) {
    for (let i = 0; i < ticks; i++) {
      harness.sim.tick();
      for (const market of markets) {
        const expected = JSON.stringify(expectedBook(await upstreamBook(harness.sim, market), null));
        await waitFor(`${market} caught up`, () =>
          JSON.stringify(client.view('book', market)?.state) === expected ? true : undefined,
        );
      }
    }
  }

  /**
   * The newest connection's write counts after `ticks` moves of the books, once its client has
   * every frame: intact (checksums hold) and gapless (seq continuous from each snapshot).
   */
  async function countsAfterTicks(
    harness: Harness,
    late: ProtocolClient,
    markets: string[],
    ticks: number,
    streams = MARKETS,
  ): Promise<WriteCounts> {
    const connection = newestConnection(harness);
    await tickAndCatchUp(harness, late, markets, ticks);
    expect(updates(late, markets)).toBeGreaterThan(0);
    expect(late.violations).toEqual([]);
    const counts = { ...connection.writeCounts };
    expect(counts.frames).toBeGreaterThanOrEqual(1 + streams + updates(late, markets));
    return counts;
  }

  /** Updates `client` received over all its streams. */
  function updates(client: ProtocolClient, markets: string[]): number {
    return markets.reduce((sum, market) => sum + client.view('book', market)!.seq - 1, 0);
  }

  it('sends the frames of several streams in fewer socket writes, each intact and in order', async () => {
    const { harness, markets } = await startWith(10);
    await subscribed(harness, markets);
    // A second subscriber to live streams gets its answer, then ten snapshots queued together.
    const late = await subscribed(harness, markets);
    const connection = newestConnection(harness);
    await waitFor('the snapshots written', () =>
      connection.writeCounts.frames >= MARKETS + 1 ? true : undefined,
    );
    expect(connection.writeCounts.writes).toBeLessThan(connection.writeCounts.frames);

    const { frames, writes } = await countsAfterTicks(harness, late, markets, 5);
    expect(writes).toBeLessThan(frames);
  });

  it('with coalescing off (0) writes every frame on its own', async () => {
    const { harness, markets } = await startWith(0);
    await subscribed(harness, markets);
    const late = await subscribed(harness, markets);
    const { frames, writes } = await countsAfterTicks(harness, late, markets, 3);
    expect(writes).toBe(frames);
  });

  it('does not hold the frames of a connection with one stream', async () => {
    const { harness, markets } = await startWith(10);
    const [market] = markets as [string];
    await subscribed(harness, [market]);
    const single = await subscribed(harness, [market]);
    // A repeated subscribe answers `subscribed` and a fresh snapshot: held, the snapshot would
    // share the next answer's write.
    for (let i = 0; i < 3; i++) await single.request({ op: 'subscribe', channel: 'book', markets: [market] });
    const { frames, writes } = await countsAfterTicks(harness, single, [market], 3, 1);
    expect(writes).toBe(frames);
  });

  it('does not hold back a client reading at full speed when its window holds more than the high-water mark', async () => {
    // Busy books polled every 20 ms, a 50 ms window: ten books' updates held for one window pass
    // a 2 KiB high-water mark. Held back, the client would get snapshots in place of updates.
    const harness = await start({
      sim: { markets: MARKETS, tickMs: 10 },
      relay: {
        bookPollMs: 20,
        compression: false,
        tuning: { coalesceMs: 50, connection: { highWaterBytes: 2048, slowConsumerTimeoutMs: 60_000 } },
      },
    });
    const markets = harness.sim.market.marketIds().slice(0, MARKETS);
    const client = await subscribed(harness, markets);
    await waitFor('a hundred updates', () => (updates(client, markets) >= 100 ? true : undefined), {
      timeoutMs: 20_000,
    });
    expect(client.violations).toEqual([]);
    expect(client.of('snapshot')).toHaveLength(MARKETS);
    const { frames, writes } = newestConnection(harness).writeCounts;
    expect(writes).toBeLessThan(frames);
  });

  it('answers a request at once, behind the stream frames already queued', async () => {
    const { harness, markets } = await startWith(10);
    await subscribed(harness, markets);
    const late = await ProtocolClient.connect(harness.relay.url);
    clients.push(late);
    const order: string[] = [];
    late.ws.on('message', (data: Buffer) => order.push(JSON.parse(data.toString()).type as string));
    late.send({ op: 'subscribe', channel: 'book', markets });
    late.send({ op: 'ping', id: 2 });
    await waitFor('the pong', () => (order.includes('pong') ? true : undefined));
    // A stream the relay judges stale adds its status, and one whose poll confirmed its state (every
    // few seconds, on a slow machine within the test) a `confirmed`: both leave whenever they are
    // due. Everything else comes in request order.
    expect(order.filter((type) => type !== 'status' && type !== 'confirmed')).toEqual([
      'subscribed',
      ...markets.map(() => 'snapshot'),
      'pong',
    ]);
  });
});

/** A coalescer with a 10 ms window on the test's own clock (`clock.now`, ms) and fake timers. */
function coalescerOnTestClock(startMs: number) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate'] });
  const clock = { now: startMs };
  return { coalescer: new WriteCoalescer(10, () => clock.now), clock };
}

describe('WriteCoalescer', () => {
  const QUIET = Number.NEGATIVE_INFINITY;

  /** Writers that record their flushes, as SocketWriter does, with the time each one flushed. */
  function recordingWriters(coalescer: WriteCoalescer, count: number) {
    const flushed: string[] = [];
    const lastFlushAt = new Array<number>(count).fill(QUIET);
    const writers: CoalescedWriter[] = lastFlushAt.map((_, n) => ({
      flushQueued: () => {
        flushed.push(`${n}`);
        lastFlushAt[n] = coalescer.flushedAt();
      },
    }));
    return { flushed, lastFlushAt, writers };
  }

  afterEach(() => {
    vi.useRealTimers();
  });

  it('flushes each waiting writer once, at the end of the turn, with one immediate for all of them', async () => {
    const coalescer = new WriteCoalescer(10);
    const { flushed, writers } = recordingWriters(coalescer, 3);
    for (const writer of writers) coalescer.schedule(writer, QUIET);
    expect(flushed).toEqual([]);
    // Immediates run in the order they were set: the coalescer's, set first, has run before this one.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(flushed).toEqual(['0', '1', '2']);
    coalescer.schedule(writers[1]!, QUIET);
    coalescer.flushNow();
    expect(flushed).toEqual(['0', '1', '2', '1']);
    // The immediate flushNow cleared does not flush again.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(flushed).toEqual(['0', '1', '2', '1']);
  });

  it('holds a writer that wrote within the window until the window ends, one timer for all', () => {
    const { coalescer, clock } = coalescerOnTestClock(1_000);
    const { flushed, lastFlushAt, writers } = recordingWriters(coalescer, 3);
    for (const writer of writers) coalescer.schedule(writer, QUIET);
    vi.runOnlyPendingTimers();
    expect(flushed).toEqual(['0', '1', '2']);
    // One clock read for the whole flush: every writer flushed in it shares its start.
    expect(lastFlushAt).toEqual([1_000, 1_000, 1_000]);

    // 4 ms later writers 0 and 1 have frames again: busy, they wait for 1,010.
    clock.now = 1_004;
    coalescer.schedule(writers[0]!, lastFlushAt[0]!);
    coalescer.schedule(writers[1]!, lastFlushAt[1]!);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(5);
    expect(flushed).toHaveLength(3);
    clock.now = 1_010;
    vi.advanceTimersByTime(1);
    expect(flushed).toEqual(['0', '1', '2', '0', '1']);
    expect(lastFlushAt).toEqual([1_010, 1_010, 1_000]);

    // Writer 2 last wrote 11 ms ago: quiet again, it leaves at the end of this turn.
    clock.now = 1_011;
    coalescer.schedule(writers[2]!, lastFlushAt[2]!);
    vi.runOnlyPendingTimers();
    expect(flushed).toEqual(['0', '1', '2', '0', '1', '2']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('writes a held writer at the earliest window end among those waiting', () => {
    const { coalescer, clock } = coalescerOnTestClock(100);
    const { flushed, writers } = recordingWriters(coalescer, 2);
    coalescer.schedule(writers[0]!, 98);
    coalescer.schedule(writers[1]!, 93);
    clock.now = 103;
    vi.advanceTimersByTime(3);
    expect(flushed).toEqual(['0', '1']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('writes held writers at once on flushNow', () => {
    const { coalescer } = coalescerOnTestClock(50);
    const { flushed, writers } = recordingWriters(coalescer, 2);
    coalescer.schedule(writers[0]!, QUIET);
    coalescer.schedule(writers[1]!, 45);
    coalescer.flushNow();
    expect(flushed).toEqual(['0', '1']);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('SocketWriter with a busy window', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A writer over a socket that takes every write at once, recording each write's bytes. */
  function writerOnFakeSocket(coalescer: WriteCoalescer, highWaterBytes = 1024 * 1024) {
    const writes: number[] = [];
    const socket = {
      writableLength: 0,
      write: (wire: Buffer, written?: () => void) => {
        writes.push(wire.length);
        written?.();
        return true;
      },
    };
    const ws = { readyState: WebSocket.OPEN };
    const writer = new SocketWriter(ws as unknown as WebSocket, socket as unknown as Socket, coalescer, {
      maxBufferBytes: 10 * HELD_BYTES_FLUSH,
      onOverflow: () => undefined,
      onDrained: () => undefined,
      highWaterBytes,
    });
    return { writer, writes };
  }

  it('holds frames of a connection that just wrote, and writes them at once past HELD_BYTES_FLUSH', () => {
    const { coalescer, clock } = coalescerOnTestClock(0);
    const { writer, writes } = writerOnFakeSocket(coalescer);
    writer.enqueue(Buffer.alloc(100));
    writer.enqueue(Buffer.alloc(100));
    vi.runOnlyPendingTimers();
    expect(writes).toEqual([200]);

    // Within the window: held, however many frames come, until they pass the bytes bound.
    clock.now = 2;
    const frame = Buffer.alloc(HELD_BYTES_FLUSH / 4);
    for (let i = 0; i < 3; i++) writer.enqueue(frame);
    expect(writes).toEqual([200]);
    expect(writer.bufferedBytes).toBe(3 * frame.length);
    writer.enqueue(frame);
    expect(writes).toEqual([200, HELD_BYTES_FLUSH]);

    // The next frame waits too, at most until the window that is already open ends (at 10: the
    // busy writers' windows end together), not longer than its own (12).
    writer.enqueue(Buffer.alloc(100));
    vi.advanceTimersByTime(7);
    expect(writes).toHaveLength(2);
    clock.now = 10;
    vi.advanceTimersByTime(1);
    expect(writes).toEqual([200, HELD_BYTES_FLUSH, 100]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('writes held frames at once when they reach a lower bound (a high-water mark under 64 KiB)', () => {
    const { coalescer, clock } = coalescerOnTestClock(0);
    const { writer, writes } = writerOnFakeSocket(coalescer, 1_000);
    writer.enqueue(Buffer.alloc(100));
    vi.runOnlyPendingTimers();
    clock.now = 1;
    writer.enqueue(Buffer.alloc(600));
    expect(writes).toEqual([100]);
    writer.enqueue(Buffer.alloc(600));
    expect(writes).toEqual([100, 1_200]);
    expect(writer.bufferedBytes).toBe(0);
  });
});
