/**
 * What a lease holder records for a history the cluster shares (relay/coordination/redis/
 * numbered-record.ts), on a stream log whose outcomes the test decides: each message it numbers
 * once its write is in the log, nothing for a confirmation, what it numbered alone while Redis was
 * away only when that is written at last, nothing of a write refused by the fence, and every stream
 * of the target whether or not anyone here subscribes; and, taking a target over from another
 * holder, what that holder logged in its last seconds (its record may have died with it).
 */
import { describe, expect, it } from 'vitest';
import type { PriceData } from '../../../packages/protocol/src/protocol/messages.ts';
import { priceNumberedCodec } from '../../../src/relay/coordination/codecs.ts';
import { clusterCodecOf, clusterMessage } from '../../../src/relay/coordination/redis/codecs.ts';
import { NumberedRecord } from '../../../src/relay/coordination/redis/numbered-record.ts';
import { loggedBefore } from '../../../src/relay/coordination/redis/record-backfill.ts';
import type {
  StoredTarget,
  StreamLog,
  WriteOutcome,
} from '../../../src/relay/coordination/redis/stream-log.ts';
import { ClusterTarget } from '../../../src/relay/coordination/redis/target-streams.ts';
import { RelayEvents } from '../../../src/relay/events.ts';
import { StreamPublisher } from '../../../src/relay/streams/publisher.ts';
import { type RecordedSubject, recordedOf } from '../../../src/relay/streams/recorded.ts';
import { StreamRegistry } from '../../../src/relay/streams/registry.ts';
import { waitFor } from '../../support/wait-for.ts';

const MARKET = '00000000-0000-4000-8000-000000000048';
const codec = clusterCodecOf(priceNumberedCodec);

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

/** The state and log a holder before this one (token 0) left: updates 2, 3 and 4, 10, 4 and 1 s ago. */
function takenOverLog() {
  const now = Date.now();
  const ago = (ms: number) => new Date(now - ms).toISOString();
  const epoch = 'e48';
  const stream = { market: MARKET, depth: undefined };
  const state: PriceData = { best_bid: '0.4400', best_ask: '0.6000' };
  const logged = [
    { seq: 2, ago: 10_000 },
    { seq: 3, ago: 4_000 },
    { seq: 4, ago: 1_000 },
  ].map(({ seq, ago: ms }) => {
    const times = { ts: ago(ms), rts: ago(ms) };
    const data = { best_bid: `0.4${seq}00` };
    return {
      seq,
      text: JSON.stringify(clusterMessage(codec, stream, 'update', { epoch, seq }, times, data, state)),
    };
  });
  // One entry of another stream's message, as a corrupted log could hold: never recorded.
  logged.push({ seq: 5, text: logged[2]!.text });
  const stored: StoredTarget = {
    token: 0,
    state: JSON.stringify(state),
    ts: ago(1_000),
    rts: ago(1_000),
    positions: new Map([['price', { epoch, seq: 4 }]]),
    ownFormat: true,
  };
  const log: StreamLog = {
    token: () => 1,
    commit: async () => 'written',
    close: async () => 'written',
    load: async (_target, wanted) => ({
      stored,
      unreadable: false,
      history: new Map(wanted.map(({ stream: field }) => [field, logged] as const)),
    }),
  };
  return log;
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
  const registry = new StreamRegistry({ lingerMs: 10, resumeBufferSize: 10 });
  const target = { key: `price:${MARKET}`, market: MARKET, codec };
  const numbering = new ClusterTarget(target.key, MARKET, codec, {
    registry,
    publisher: new StreamPublisher(new RelayEvents(), Date.now),
    now: Date.now,
    closeMarket: () => {},
    log,
    spent: () => {},
    record: new NumberedRecord(sink, 'price', MARKET, priceNumberedCodec.streams, loggedBefore(log, target)),
  });
  let askedAt = 0;
  const produce = (bid: string) => {
    askedAt += 1;
    const receivedAt = Date.now();
    const rts = new Date(receivedAt).toISOString();
    const state: PriceData = { best_bid: bid, best_ask: '0.6000' };
    return numbering.produce({ whole: state }, { askedAt, ts: rts, rts, receivedAt });
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

  it('records again, taking the target over, what the holder before logged in its last seconds', async () => {
    const { recorded, produce } = holder(takenOverLog());
    await produce('0.4500');
    await waitFor('the back-fill', () => recorded.length >= 3);
    expect([...recorded].sort((a, b) => a.seq - b.seq)).toEqual([
      { key: `price:${MARKET}`, type: 'update', seq: 3, data: '{"best_bid":"0.4300"}' },
      { key: `price:${MARKET}`, type: 'update', seq: 4, data: '{"best_bid":"0.4400"}' },
      { key: `price:${MARKET}`, type: 'update', seq: 5, data: '{"best_bid":"0.4500"}' },
    ]);
  });
});
