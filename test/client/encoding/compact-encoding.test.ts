/**
 * The SDK's compact encoding (docs/client.md "Encoding") against a scripted relay: it offers the
 * subprotocol by default and not with `encoding: 'json'`, turns compact arrays back into the
 * JSON-mode messages with the stream numbers of `subscribed`, reports an unknown stream number
 * without harm, resyncs a stream whose compact message is broken, and works with a relay that
 * selects no subprotocol at all.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  connect,
  type RelayClient,
  type RelayClientError,
  type ResyncReason,
} from '../../../packages/client/src/node.ts';
import type {
  BookSnapshotMessage,
  BookUpdateMessage,
} from '../../../packages/client/src/subscriptions/channels/book/subscription.ts';
import {
  applyBookUpdate,
  type BookState,
  bookChecksum,
} from '../../../packages/protocol/src/protocol/book.ts';
import {
  COMPACT_SUBPROTOCOL,
  encodeCompactStreamMessage,
} from '../../../packages/protocol/src/protocol/compact.ts';
import type { BookData, StreamMessage } from '../../../packages/protocol/src/protocol/messages.ts';
import { waitFor } from '../../support/wait-for.ts';
import { FakeRelay, stamp } from '../fake-relay.ts';
import { fastBackoff } from '../sdk-support.ts';

const market = 'b7e2c4a1-93f0-4d5e-8a6b-2c1d0e9f8a7b';
const other = '3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f';
const first: BookState = {
  bids: [
    ['0.52000000', '150'],
    ['0.51000000', '20.5'],
  ],
  asks: [['0.53000000', '75.25']],
  last_price: '0.52000000',
};
const change: BookData = { bids: [['0.51000000', '0']], asks: [['1.00000000', '3']], last_price: '0.5' };

function snapshot(id: string, data: BookState, seq = 41): BookSnapshotMessage {
  return {
    type: 'snapshot',
    channel: 'book',
    market: id,
    depth: 10,
    epoch: 'e1',
    seq,
    ...stamp,
    data,
    checksum: bookChecksum(data),
  };
}

function update(id: string, after: BookState, data: BookData, seq: number): BookUpdateMessage {
  const checksum = bookChecksum(applyBookUpdate(after, data));
  return {
    type: 'update',
    channel: 'book',
    market: id,
    depth: 10,
    epoch: 'e1',
    seq,
    ...stamp,
    data,
    checksum,
  };
}

let relay: FakeRelay;
let client: RelayClient;
let errors: RelayClientError[];

async function start(
  options: { selectProtocol?: boolean; encoding?: 'compact' | 'json' } = {},
): Promise<void> {
  relay = await FakeRelay.start(options.selectProtocol === false ? { selectProtocol: false } : {});
  relay.numberStreams = true;
  client = connect(relay.url, {
    backoff: fastBackoff,
    ...(options.encoding === undefined ? {} : { encoding: options.encoding }),
  });
  errors = [];
  client.on('error', (error) => errors.push(error));
}

function sendCompact(message: StreamMessage, stream = relay.streamNumber('book', message.market, 10)): void {
  relay.sendText(JSON.stringify(encodeCompactStreamMessage(message, stream)));
}

afterEach(async () => {
  await client?.close();
  await relay?.close();
});

describe('compact encoding', () => {
  it('is offered by default and decoded into the same messages as JSON', async () => {
    await start();
    const book = client.subscribeBook(market, { depth: 10 });
    const messages: StreamMessage[] = [];
    book.on('snapshot', ({ message }) => messages.push(message));
    book.on('update', ({ message }) => messages.push(message));
    await relay.subscribe('book');
    expect(relay.sockets[0]?.protocol).toBe(COMPACT_SUBPROTOCOL);

    const sent = [snapshot(market, first), update(market, first, change, 42)];
    for (const message of sent) sendCompact(message);
    await waitFor('the update', () => messages.length === 2);
    expect(messages).toEqual(sent);
    expect(book.state).toEqual(applyBookUpdate(first, change));
    expect(book.status).toBe('live');
    // A JSON object still reads as JSON on a compact connection.
    const next = update(market, book.state!, { bids: [['0.50000000', '1']], asks: [] }, 43);
    relay.send(next);
    await waitFor('the JSON update', () => messages.length === 3);
    expect(messages[2]).toEqual(next);
    expect(errors).toEqual([]);
  });

  it('reports an unknown stream number as an error and carries on', async () => {
    await start();
    const book = client.subscribeBook(market, { depth: 10 });
    const resyncs: ResyncReason[] = [];
    book.on('resync', ({ reason }) => resyncs.push(reason));
    await relay.subscribe('book');
    sendCompact(snapshot(market, first));
    await waitFor('the snapshot', () => book.status === 'live');

    sendCompact(update(other, first, change, 42), 999);
    await waitFor('the unknown-stream error', () => errors.length > 0);
    expect(errors.map((error) => error.code)).toEqual(['unknown_stream']);
    expect(errors[0]?.message).toContain('999');

    sendCompact(update(market, first, change, 42));
    await waitFor('the update after it', () => book.seq === 42);
    expect(book.state).toEqual(applyBookUpdate(first, change));
    expect(resyncs).toEqual([]);
  });

  it('resyncs a stream whose compact message is broken, and only that one', async () => {
    await start();
    const book = client.subscribeBook(market, { depth: 10 });
    const bystander = client.subscribeBook(other, { depth: 10 });
    const resyncs: string[] = [];
    book.on('resync', ({ reason }) => resyncs.push(reason));
    bystander.on('resync', ({ reason }) => resyncs.push(`bystander ${reason}`));
    await relay.subscribe('book');
    sendCompact(snapshot(market, first));
    sendCompact(snapshot(other, first));
    await waitFor('both snapshots', () => book.status === 'live' && bystander.status === 'live');

    const broken = encodeCompactStreamMessage(
      update(market, first, change, 42),
      relay.streamNumber('book', market, 10),
    );
    broken[6] = [[['0.5x', '1']], []];
    relay.sendText(JSON.stringify(broken));
    await waitFor('the resync', () => resyncs.length > 0);
    expect(resyncs).toEqual(['malformed']);
    expect(errors.map((error) => error.code)).toEqual(['malformed_frame']);
    // The resync asks the relay for that one stream again.
    expect((await relay.subscribe('book', 1)).markets).toEqual([market]);
    expect(bystander.status).toBe('live');
  });

  it('learns new numbers on every connection', async () => {
    await start();
    const book = client.subscribeBook(market, { depth: 10 });
    await relay.subscribe('book');
    const firstNumber = relay.streamNumber('book', market, 10);
    sendCompact(snapshot(market, first));
    await waitFor('the snapshot', () => book.status === 'live');
    relay.dropConnections();
    await waitFor('the resubscribe', () => relay.sockets.length === 2 && relay.requests.length === 2);
    // The first connection's number means nothing on the second, which announced its own.
    sendCompact(snapshot(market, first, 50), firstNumber);
    await waitFor('the unknown-stream error', () => errors.some((error) => error.code === 'unknown_stream'));
    expect(relay.streamNumber('book', market, 10)).not.toBe(firstNumber);
    sendCompact(snapshot(market, first, 50));
    await waitFor('the snapshot on the new connection', () => book.seq === 50 && book.status === 'live');
  });

  it("is not offered with encoding: 'json'", async () => {
    await start({ encoding: 'json' });
    const book = client.subscribeBook(market, { depth: 10 });
    await relay.subscribe('book');
    expect(relay.sockets[0]?.protocol).toBe('');
    relay.send(snapshot(market, first));
    await waitFor('the snapshot', () => book.status === 'live');
    expect(book.state).toEqual(first);
  });

  it('works with a relay that selects no subprotocol: asks again without it and reads JSON', async () => {
    await start({ selectProtocol: false });
    const book = client.subscribeBook(market, { depth: 10 });
    await relay.subscribe('book');
    // `ws` refused the first handshake (no subprotocol in the answer); the retry offered none.
    expect(errors.map((error) => error.message)).toContain('Server sent no subprotocol');
    expect(relay.sockets.at(-1)?.protocol).toBe('');
    relay.send(snapshot(market, first));
    await waitFor('the snapshot', () => book.status === 'live');
    expect(book.state).toEqual(first);
  });
});
