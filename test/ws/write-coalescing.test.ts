/**
 * Write coalescing (protocol.md "Write coalescing"): stream frames that become ready for one
 * connection in one event-loop turn leave in one socket write at the turn's end, each still a
 * complete frame, in order per stream; `coalesceMs` 0 writes every frame on its own. Counted in the connection's write
 * path, never timed.
 */
import { describe, expect, it } from 'vitest';
import type { ClientConnection } from '../../src/ws/client-connection.ts';
import type { WriteCounts } from '../../src/ws/socket-writer.ts';
import { type CoalescedWriter, WriteCoalescer } from '../../src/ws/write-coalescer.ts';
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

describe('WriteCoalescer', () => {
  it('flushes each waiting writer once, at the end of the turn, with one immediate for all of them', async () => {
    const coalescer = new WriteCoalescer(true);
    const flushed: string[] = [];
    const writers: CoalescedWriter[] = [0, 1, 2].map((n) => ({ flushQueued: () => flushed.push(`${n}`) }));
    for (const writer of writers) coalescer.schedule(writer);
    expect(flushed).toEqual([]);
    // Immediates run in the order they were set: the coalescer's, set first, has run before this one.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(flushed).toEqual(['0', '1', '2']);
    coalescer.schedule(writers[1]!);
    coalescer.flushNow();
    expect(flushed).toEqual(['0', '1', '2', '1']);
    // The immediate flushNow cleared does not flush again.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(flushed).toEqual(['0', '1', '2', '1']);
  });
});
