/**
 * Trades since a time or an `activity_id` on a relay that records (channels/trades/relay-since-record.ts),
 * from a listing held in memory, newest first and oldest first, under pages of 20: the record's
 * run answers for what it holds and upstream's pages are read only before its oldest trade (no
 * request reaches into the recorded part but the probes that find an oldest-first listing's end),
 * joined with no gap and no duplicate; a listing that ends before the time says where it starts.
 */
import { describe, expect, it } from 'vitest';
import { readWithRecord } from '../../../src/relay/channels/trades/relay-since-record.ts';
import { ids, NOW, tradeListing } from '../../support/channels/trades-listing.ts';

const listing = (count: number, order: 'newest-first' | 'oldest-first') => tradeListing(count, order, 20);

describe.each(['newest-first', 'oldest-first'] as const)('readWithRecord, %s', (order) => {
  it('reads upstream only before the record: no page of the recorded part', async () => {
    const upstream = listing(1_000, order);
    const run = upstream.log.slice(700);
    const since = { kind: 'time', at: Date.parse(upstream.log[500]!.activity_timestamp), text: '' } as const;
    // A recorded message may repeat trades an earlier one brought: each counts once.
    const read = await readWithRecord(upstream.read, since, NOW, [...run, ...run.slice(-5)]);
    if (!read.ok) throw new Error(read.message);
    expect(ids(read.trades)).toEqual(ids(upstream.log.slice(500)));
    expect(read.startsAt).toBeUndefined();
    // The recorded part's offsets: newest first the first 299, oldest first from 701 on.
    const recordedPart = ({ offset, limit }: { offset: number; limit: number }) =>
      limit > 1 && (order === 'newest-first' ? offset < 299 : offset + 20 > 701);
    expect(upstream.asked.filter(recordedPart)).toEqual([]);
    // The 200 trades before the record: newest first ten pages of 20 and the head; oldest first
    // three chunks of 100 read backwards (five pages each) and the head, beside the probes.
    const pages = upstream.asked.filter(({ limit }) => limit > 1).length;
    expect(pages).toBeLessThanOrEqual(order === 'newest-first' ? 12 : 16);
    expect(read.pages).toBe(upstream.asked.length);
  });

  it('asks upstream nothing when the record reaches the time or holds the named trade', async () => {
    const upstream = listing(300, order);
    const run = upstream.log.slice(100);
    const since = { kind: 'time', at: Date.parse(upstream.log[150]!.activity_timestamp), text: '' } as const;
    const byTime = await readWithRecord(upstream.read, since, NOW, run);
    expect(byTime.ok && ids(byTime.trades)).toEqual(ids(upstream.log.slice(150)));
    const byId = await readWithRecord(upstream.read, { kind: 'id', id: 't120' }, NOW, run);
    expect(byId.ok && ids(byId.trades)).toEqual(ids(upstream.log.slice(121)));
    expect(upstream.asked).toEqual([]);
  });

  it('an activity_id older than the record: upstream before it, the record after', async () => {
    const upstream = listing(300, order);
    const read = await readWithRecord(upstream.read, { kind: 'id', id: 't40' }, NOW, upstream.log.slice(200));
    expect(read.ok && ids(read.trades)).toEqual(ids(upstream.log.slice(41)));
    const missing = await readWithRecord(
      upstream.read,
      { kind: 'id', id: 'nope' },
      NOW,
      upstream.log.slice(200),
    );
    expect(missing).toMatchObject({ ok: false, reason: 'not_found' });
  });

  it('a listing that ends after the time: complete from its oldest trade', async () => {
    const upstream = listing(120, order);
    const since = { kind: 'time', at: NOW - 3_600_000, text: '' } as const;
    const read = await readWithRecord(upstream.read, since, NOW, upstream.log.slice(60));
    expect(read.ok && ids(read.trades)).toEqual(ids(upstream.log));
    expect(read.ok && read.startsAt).toBe(Date.parse(upstream.log[0]!.activity_timestamp));
    // The record holds all there is: the listing ends at its anchor.
    const whole = await readWithRecord(upstream.read, since, NOW, upstream.log);
    expect(whole.ok && ids(whole.trades)).toEqual(ids(upstream.log));
    expect(whole.ok && whole.startsAt).toBe(Date.parse(upstream.log[0]!.activity_timestamp));
  });

  it('a time equal to the record’s oldest trade reads upstream: a trade of the same millisecond may be older', async () => {
    const upstream = listing(5, order);
    // t2 and t3 share a millisecond; the run starts at t3.
    upstream.log[2] = { ...upstream.log[2]!, activity_timestamp: upstream.log[3]!.activity_timestamp };
    const since = { kind: 'time', at: Date.parse(upstream.log[3]!.activity_timestamp), text: '' } as const;
    const read = await readWithRecord(upstream.read, since, NOW, upstream.log.slice(3));
    expect(read.ok && ids(read.trades)).toEqual(['t2', 't3', 't4']);
    expect(upstream.asked).not.toEqual([]);
  });
});
