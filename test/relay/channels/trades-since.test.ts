/**
 * Reading trades since a time or an `activity_id` (channels/trades/relay-since.ts) from a listing
 * held in memory, newest first and oldest first, under pages smaller than asked: every entry since
 * then once, oldest first, also while trades arrive between page requests; the bounds (10,000
 * trades, an id not found within 24 hours) answered as such; the end of an oldest-first listing
 * found in few requests.
 */
import { describe, expect, it } from 'vitest';
import { SINCE_MAX_TRADES } from '../../../packages/protocol/src/channels/trades/since.ts';
import { readSince } from '../../../src/relay/channels/trades/relay-since.ts';
import { ids, NOW, trade, tradeListing } from '../../support/channels/trades-listing.ts';

/** A listing of `count` trades one second apart up to NOW, oldest first; `onRequest` adds trades. */
const listing = (count: number, order: 'newest-first' | 'oldest-first', pageMax = 100) =>
  tradeListing(count, order, pageMax);

describe.each(['newest-first', 'oldest-first'] as const)('readSince, %s', (order) => {
  it('reads every trade since a time, oldest first, under pages of 20', async () => {
    const upstream = listing(1_500, order, 20);
    const since = { kind: 'time', at: NOW - 700_500, text: '' } as const;
    const read = await readSince(upstream.read, since, NOW);
    expect(read.ok && ids(read.trades)).toEqual(ids(upstream.log.slice(-700)));
  });

  it('loses and repeats nothing while trades arrive between page requests', async () => {
    const upstream = listing(800, order, 25);
    let next = 800;
    upstream.onRequest = () => {
      for (let i = 0; i < 3; i++) upstream.log.push(trade(next++, NOW + next));
    };
    const read = await readSince(upstream.read, { kind: 'time', at: NOW - 600_000, text: '' }, NOW + 10_000);
    if (!read.ok) throw new Error(read.message);
    const got = ids(read.trades);
    expect(new Set(got).size).toBe(got.length);
    // Every trade since then that was listed before the read began, in order; later ones (the live
    // stream's) may follow, in order.
    const before = ids(upstream.log.slice(200, 800));
    expect(got.slice(0, before.length)).toEqual(before);
    expect(got).toEqual(ids(upstream.log).slice(200, 200 + got.length));
  });

  it('reads the trades after an activity_id; an id not listed within 24 hours is not_found', async () => {
    const upstream = listing(300, order);
    const read = await readSince(upstream.read, { kind: 'id', id: 't120' }, NOW);
    expect(read.ok && ids(read.trades)).toEqual(ids(upstream.log.slice(121)));
    const missing = await readSince(upstream.read, { kind: 'id', id: 'nope' }, NOW);
    expect(missing).toMatchObject({ ok: false, reason: 'not_found' });
  });

  it(`refuses more than ${SINCE_MAX_TRADES} trades since then, naming how far back the bound reaches`, async () => {
    const upstream = listing(SINCE_MAX_TRADES + 500, order);
    const read = await readSince(upstream.read, { kind: 'time', at: NOW - 86_000_000, text: 'then' }, NOW);
    expect(read).toMatchObject({ ok: false, reason: 'too_many' });
    expect(!read.ok && read.message).toContain(upstream.log.at(-SINCE_MAX_TRADES)!.activity_timestamp);
    // Bounded: about the bound's pages, not the whole listing's.
    expect(upstream.requests).toBeLessThan(SINCE_MAX_TRADES / 100 + 40);
  });
});

it('finds the end of a long oldest-first listing in a few requests', async () => {
  const upstream = listing(9_000, 'oldest-first');
  const read = await readSince(upstream.read, { kind: 'time', at: NOW - 50_500, text: '' }, NOW);
  expect(read.ok && ids(read.trades)).toEqual(ids(upstream.log.slice(-50)));
  expect(upstream.requests).toBeLessThan(40);
});
