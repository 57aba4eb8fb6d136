/**
 * The SDK's `logger` option (docs/client.md "Logging"): a stream that goes stale is a `warn` line,
 * one live again after it an `info` line, whether the relay reports upstream failing or the
 * connection drops; nothing is written without the option, and a logger that throws is reported as
 * a listener's error without stopping the stream.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type ClientLogger, connect, type RelayClient } from '../../../packages/client/src/node.ts';
import { type BookState, bookChecksum } from '../../../packages/protocol/src/protocol/book.ts';
import { waitFor } from '../../support/wait-for.ts';
import { FakeRelay, stamp } from '../fake-relay.ts';
import { fastBackoff } from '../sdk-support.ts';

const market = 'b7e2c4a1-93f0-4d5e-8a6b-2c1d0e9f8a7b';
const book: BookState = { bids: [['0.52000000', '150']], asks: [['0.53000000', '75']] };

let relay: FakeRelay | undefined;
let client: RelayClient | undefined;

afterEach(async () => {
  await client?.close();
  await relay?.close();
});

/** A logger that keeps its lines, each as `level: text`. */
function recordingLogger(): { logger: ClientLogger; lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    logger: { warn: (text) => lines.push(`warn: ${text}`), info: (text) => lines.push(`info: ${text}`) },
  };
}

async function liveStreams(logger: ClientLogger | undefined) {
  relay = await FakeRelay.start();
  client = connect(relay.url, { backoff: fastBackoff, ...(logger === undefined ? {} : { logger }) });
  const price = client.subscribePrice(market);
  const depth10 = client.subscribeBook(market, { depth: 10 });
  await relay.subscribe('price');
  await relay.subscribe('book');
  relay.send({ type: 'snapshot', channel: 'price', market, epoch: 'e1', seq: 1, ...stamp, data: {} });
  const checksum = bookChecksum(book);
  relay.send({
    type: 'snapshot',
    channel: 'book',
    market,
    depth: 10,
    epoch: 'e1',
    seq: 1,
    ...stamp,
    data: book,
    checksum,
  });
  await waitFor('both streams live', () => price.status === 'live' && depth10.status === 'live');
  return { relay, client, price, book: depth10 };
}

describe('client SDK: stale and live again in the logger', () => {
  it('warns when the relay reports a stream stale and says when it is live again', async () => {
    const { logger, lines } = recordingLogger();
    const { relay, price } = await liveStreams(logger);
    expect(lines).toEqual([]);
    relay.send({ type: 'status', channel: 'price', market, state: 'stale', reason: 'upstream unavailable' });
    await waitFor('price stale', () => price.status === 'stale');
    relay.send({ type: 'status', channel: 'price', market, state: 'live' });
    await waitFor('price live', () => price.status === 'live');
    expect(lines).toEqual([
      `warn: price ${market} is stale: upstream unavailable`,
      `info: price ${market} is live again`,
    ]);
  });

  it('warns for every stream when the connection drops, and says each is live again after the reconnect', async () => {
    const { logger, lines } = recordingLogger();
    const { relay, price, book: depth10 } = await liveStreams(logger);
    relay.dropConnections();
    await waitFor('both stale', () => price.status === 'stale' && depth10.status === 'stale');
    await relay.subscribe('price', 1);
    await relay.subscribe('book', 1);
    relay.send({ type: 'snapshot', channel: 'price', market, epoch: 'e1', seq: 2, ...stamp, data: {} });
    await waitFor('price live again', () => price.status === 'live');
    expect(lines.sort()).toEqual([
      `info: price ${market} is live again`,
      `warn: book ${market} depth 10 is stale: connection lost`,
      `warn: price ${market} is stale: connection lost`,
    ]);
  });

  it('writes nothing without a logger, and a logger that throws is an error event, the stream going on', async () => {
    const consoleWarn = vi.spyOn(console, 'warn');
    const consoleInfo = vi.spyOn(console, 'info');
    try {
      const silent = await liveStreams(undefined);
      silent.relay.send({ type: 'status', channel: 'price', market, state: 'stale' });
      await waitFor('price stale', () => silent.price.status === 'stale');
      silent.relay.send({ type: 'status', channel: 'price', market, state: 'live' });
      await waitFor('price live', () => silent.price.status === 'live');
      await silent.client.close();
      await silent.relay.close();
      expect([consoleWarn.mock.calls, consoleInfo.mock.calls]).toEqual([[], []]);
    } finally {
      consoleWarn.mockRestore();
      consoleInfo.mockRestore();
    }

    const throwing: ClientLogger = {
      warn: () => {
        throw new Error('the log is full');
      },
      info: () => undefined,
    };
    const { relay, client: withLogger, price } = await liveStreams(throwing);
    const errors: string[] = [];
    withLogger.on('error', (error) => errors.push(error.code));
    relay.send({ type: 'status', channel: 'price', market, state: 'stale' });
    await waitFor('the logger failure reported', () => errors.length === 1);
    expect([errors, price.status]).toEqual([['listener_threw'], 'stale']);
    relay.send({ type: 'status', channel: 'price', market, state: 'live' });
    await waitFor('price live', () => price.status === 'live');
  });
});
