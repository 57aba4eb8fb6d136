/**
 * The export reader's own parts, without a relay: a body cut into chunks anywhere (inside a line,
 * inside a multi-byte character) reads as the same messages in the same order (a property); a line
 * that is not a stream message and a refusal each throw what they are; the export's URL keeps a
 * relay's path prefix and moves to its HTTP origin.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type HistoryFetch,
  historyUrl,
  readHistory,
} from '../../../packages/client/src/history/export-reader.ts';
import { propertyRuns } from '../../support/property-runs.ts';

const market = '3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f';

function priceMessage(seq: number, last: string) {
  return {
    type: seq === 1 ? 'snapshot' : 'update',
    channel: 'price',
    market,
    epoch: 'e1',
    seq,
    ts: '2026-03-02T14:05:09.120Z',
    rts: '2026-03-02T14:05:09.171Z',
    data: { last_price: last },
  };
}

/** A fetch answering `body` in the given chunks. */
function chunkedFetch(bytes: Uint8Array, cuts: number[], status = 200): HistoryFetch {
  const bounds = [0, ...[...new Set(cuts)].sort((a, b) => a - b), bytes.length];
  return async () => ({
    ok: status < 400,
    status,
    text: async () => new TextDecoder().decode(bytes),
    body: new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i + 1 < bounds.length; i++) controller.enqueue(bytes.slice(bounds[i], bounds[i + 1]));
        controller.close();
      },
    }),
  });
}

async function readAll(fetchImpl: HistoryFetch) {
  const read = [];
  for await (const message of readHistory(fetchImpl, 'http://relay/v1/history/price', {})) read.push(message);
  return read;
}

describe('the export reader', () => {
  it('reads the same messages however the body is cut into chunks', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: 'grapheme', maxLength: 12 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.boolean(),
        async (prices, cutSeeds, trailingNewline) => {
          const messages = prices.map((last, index) => priceMessage(index + 1, last));
          const text =
            messages.map((message) => JSON.stringify(message)).join('\n') + (trailingNewline ? '\n' : '');
          const bytes = new TextEncoder().encode(text);
          const cuts = cutSeeds.map((seed) => seed % (bytes.length + 1));
          expect(await readAll(chunkedFetch(bytes, cuts))).toEqual(messages);
        },
      ),
      { numRuns: propertyRuns(200) },
    );
  });

  it('throws malformed_frame on a line that is not a stream message, history_refused on a refusal', async () => {
    const bad = new TextEncoder().encode(`${JSON.stringify(priceMessage(1, '0.5'))}\n{"type":"pong"}\n`);
    await expect(readAll(chunkedFetch(bad, []))).rejects.toMatchObject({ code: 'malformed_frame' });
    const refusal = new TextEncoder().encode(
      '{"error":"history_off","message":"this relay records no history"}',
    );
    await expect(readAll(chunkedFetch(refusal, [], 404))).rejects.toMatchObject({
      code: 'history_refused',
      message: 'history export answered 404: history_off: this relay records no history',
    });
  });

  it("asks the relay's HTTP origin, keeping a path prefix in front of it", () => {
    const query = {
      channel: 'book' as const,
      market,
      from: '2026-03-02T14:00:00Z',
      depth: null,
      group: '0.05',
    };
    expect(historyUrl('wss://relay.example/v1/ws?token=k', query)).toBe(
      `https://relay.example/v1/history/book?market=${market}&from=2026-03-02T14%3A00%3A00Z&depth=full&group=0.05&format=ndjson`,
    );
    expect(
      historyUrl('ws://127.0.0.1:8080/relay/v1/ws', {
        channel: 'price',
        market,
        from: '2026-03-02T14:00:00Z',
      }),
    ).toBe(
      `http://127.0.0.1:8080/relay/v1/history/price?market=${market}&from=2026-03-02T14%3A00%3A00Z&format=ndjson`,
    );
  });
});
