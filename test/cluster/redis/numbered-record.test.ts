/**
 * What a lease holder records for a history the cluster shares (relay/coordination/redis/
 * numbered-record.ts), on a stream log whose outcomes the test decides: each message it numbers
 * once its write is in the log, nothing for a confirmation, what it numbered alone while Redis was
 * away only when that is written at last, nothing of a write refused by the fence, and every stream
 * of the target whether or not anyone here subscribes.
 */
import { describe, expect, it } from 'vitest';
import type { PriceData } from '../../../packages/protocol/src/protocol/messages.ts';
import { priceNumberedCodec } from '../../../src/relay/coordination/codecs.ts';
import { clusterCodecOf } from '../../../src/relay/coordination/redis/codecs.ts';
import { NumberedRecord } from '../../../src/relay/coordination/redis/numbered-record.ts';
import type { StreamLog, WriteOutcome } from '../../../src/relay/coordination/redis/stream-log.ts';
import { ClusterTarget } from '../../../src/relay/coordination/redis/target-streams.ts';
import { RelayEvents } from '../../../src/relay/events.ts';
import { StreamPublisher } from '../../../src/relay/streams/publisher.ts';
import { type RecordedSubject, recordedOf } from '../../../src/relay/streams/recorded.ts';
import { StreamRegistry } from '../../../src/relay/streams/registry.ts';

const MARKET = '00000000-0000-4000-8000-000000000048';

/** A log that holds the lease (token 1), has no stored state, and answers each commit with `outcome`. */
function scriptedLog() {
  const script = { outcome: 'written' as WriteOutcome };
  const log: StreamLog = {
    token: () => 1,
    commit: async () => script.outcome,
    close: async () => script.outcome,
    load: async () => ({ stored: undefined, unreadable: false, history: new Map() }),
  };
  return { log, script };
}

function holder(log: StreamLog) {
  const recorded: { key: string; type: string; seq: number; data: string }[] = [];
  const sink = (
    subject: RecordedSubject,
    frame: Parameters<typeof recordedOf>[1],
    kind: 'snapshot' | 'update',
  ) => {
    const message = recordedOf(subject, frame, kind);
    recorded.push({ key: message.stream, type: message.type, seq: message.seq, data: message.data });
  };
  const registry = new StreamRegistry({ lingerMs: 10, resumeBufferSize: 10, onInterestChange: () => {} });
  const target = new ClusterTarget(`price:${MARKET}`, MARKET, clusterCodecOf(priceNumberedCodec), {
    registry,
    publisher: new StreamPublisher(new RelayEvents(), Date.now),
    now: Date.now,
    closeMarket: () => {},
    log,
    spent: () => {},
    record: new NumberedRecord(sink, 'price', MARKET, priceNumberedCodec.streams),
  });
  let askedAt = 0;
  const produce = (bid: string) => {
    askedAt += 1;
    const receivedAt = Date.now();
    const rts = new Date(receivedAt).toISOString();
    const state: PriceData = { best_bid: bid, best_ask: '0.6000' };
    return target.produce(() => state, { askedAt, ts: rts, rts, receivedAt });
  };
  return { recorded, produce };
}

describe('the lease holder records what it numbers', () => {
  it('records each written message once, with nobody subscribed here, and nothing for a confirmation', async () => {
    const { log } = scriptedLog();
    const { recorded, produce } = holder(log);
    await produce('0.4000');
    await produce('0.4000');
    await produce('0.4100');
    expect(recorded).toEqual([
      { key: `price:${MARKET}`, type: 'snapshot', seq: 1, data: '{"best_bid":"0.4000","best_ask":"0.6000"}' },
      { key: `price:${MARKET}`, type: 'update', seq: 2, data: expect.stringContaining('0.4100') },
    ]);
  });

  it('records what it numbered while Redis was away when that is written, in order', async () => {
    const { log, script } = scriptedLog();
    const { recorded, produce } = holder(log);
    await produce('0.4000');
    script.outcome = 'unavailable';
    await produce('0.4100');
    await produce('0.4200');
    expect(recorded.map(({ seq }) => seq)).toEqual([1]);
    script.outcome = 'written';
    await produce('0.4300');
    expect(recorded.map(({ seq }) => seq)).toEqual([1, 2, 3, 4]);
  });

  it('records nothing of a write the fence refused', async () => {
    const { log, script } = scriptedLog();
    const { recorded, produce } = holder(log);
    await produce('0.4000');
    script.outcome = 'fenced';
    await produce('0.4100');
    expect(recorded.map(({ seq }) => seq)).toEqual([1]);
  });
});
