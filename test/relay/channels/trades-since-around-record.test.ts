/**
 * Trades since a time or an `activity_id` from a recorded run that ends before the subscriber's
 * join (channels/trades/relay-since-record.ts `readAroundRecord`): another relay's run in a cluster
 * sharing the record, or this relay's before it lost the lease or restarted. From a listing held in
 * memory, newest first and oldest first, under pages of 20: upstream's pages are read for the
 * trades after the run's newest and before its oldest, the run answers for what it holds, joined by
 * `activity_id` with no gap and no duplicate.
 */
import { describe, expect, it } from 'vitest';
import type { TradeEntry } from '../../../packages/protocol/src/channels/trades/trades.ts';
import { readAroundRecord } from '../../../src/relay/channels/trades/relay-since-record.ts';
import { ids, NOW, tradeListing } from '../../support/channels/trades-listing.ts';

const listing = (count: number, order: 'newest-first' | 'oldest-first') => tradeListing(count, order, 20);
const timeAt = (entry: TradeEntry) =>
  ({ kind: 'time', at: Date.parse(entry.activity_timestamp), text: entry.activity_timestamp }) as const;

describe.each(['newest-first', 'oldest-first'] as const)('readAroundRecord, %s', (order) => {
  it('reads upstream after the run and before it, not the run’s part', async () => {
    const upstream = listing(1_000, order);
    // Another relay recorded trades 500 to 799; 200 came after its record ends.
    const run = upstream.log.slice(500, 800);
    const read = await readAroundRecord(upstream.read, timeAt(upstream.log[400]!), NOW, [
      ...run,
      ...run.slice(-3),
    ]);
    if (!read.ok) throw new Error(read.message);
    expect(ids(read.trades)).toEqual(ids(upstream.log.slice(400)));
    expect(read.startsAt).toBeUndefined();
    // Oldest first, the read backwards from the end reads its chunks of 100 whole: one reaches 700.
    expect(upstream.asked.filter((page) => upstream.within(page, 520, 700))).toEqual([]);
    expect(read.pages).toBe(upstream.asked.length);
  });

  it('an activity_id the run holds: upstream only after the run', async () => {
    const upstream = listing(300, order);
    const read = await readAroundRecord(
      upstream.read,
      { kind: 'id', id: 't150' },
      NOW,
      upstream.log.slice(100, 250),
    );
    expect(read.ok && ids(read.trades)).toEqual(ids(upstream.log.slice(151)));
    // Oldest first, the read backwards from the end reads a chunk of 100 whole: it reaches 200.
    expect(upstream.asked.filter((page) => upstream.within(page, 100, 200))).toEqual([]);
  });

  it('a time inside the run: upstream only after the run', async () => {
    const upstream = listing(300, order);
    const run = upstream.log.slice(100, 250);
    const read = await readAroundRecord(upstream.read, timeAt(upstream.log[180]!), NOW, run);
    expect(read.ok && ids(read.trades)).toEqual(ids(upstream.log.slice(180)));
    expect(upstream.asked.filter((page) => upstream.within(page, 100, 200))).toEqual([]);
  });

  it('an activity_id after the run: upstream after it alone', async () => {
    const upstream = listing(300, order);
    const read = await readAroundRecord(
      upstream.read,
      { kind: 'id', id: 't270' },
      NOW,
      upstream.log.slice(100, 250),
    );
    expect(read.ok && ids(read.trades)).toEqual(ids(upstream.log.slice(271)));
  });

  it('an activity_id before the run: upstream before and after it, the run between', async () => {
    const upstream = listing(300, order);
    const read = await readAroundRecord(
      upstream.read,
      { kind: 'id', id: 't40' },
      NOW,
      upstream.log.slice(100, 250),
    );
    expect(read.ok && ids(read.trades)).toEqual(ids(upstream.log.slice(41)));
    const missing = await readAroundRecord(
      upstream.read,
      { kind: 'id', id: 'nope' },
      NOW,
      upstream.log.slice(100, 250),
    );
    expect(missing).toMatchObject({ ok: false, reason: 'not_found' });
  });

  it('a time after the run, or a run upstream does not list: read as without a record', async () => {
    const upstream = listing(300, order);
    const late = await readAroundRecord(
      upstream.read,
      timeAt(upstream.log[260]!),
      NOW,
      upstream.log.slice(100, 250),
    );
    expect(late.ok && ids(late.trades)).toEqual(ids(upstream.log.slice(260)));
    const elsewhere = upstream.log
      .slice(100, 250)
      .map((entry) => ({ ...entry, activity_id: `x${entry.activity_id}` }));
    const unknown = await readAroundRecord(upstream.read, timeAt(upstream.log[50]!), NOW, elsewhere);
    expect(unknown.ok && ids(unknown.trades)).toEqual(ids(upstream.log.slice(50)));
  });

  it('a listing that ends after the time: complete from its oldest trade', async () => {
    const upstream = listing(120, order);
    const since = { kind: 'time', at: NOW - 3_600_000, text: '' } as const;
    const read = await readAroundRecord(upstream.read, since, NOW, upstream.log.slice(30, 90));
    expect(read.ok && ids(read.trades)).toEqual(ids(upstream.log));
    expect(read.ok && read.startsAt).toBe(Date.parse(upstream.log[0]!.activity_timestamp));
  });
});
