/**
 * A `book` state another relay stored in Redis is held to upstream's price form on arrival: the
 * slice's diff orders levels by that form alone (src/relay/channels/book/checked-decimals.ts), so a
 * price in another spelling would make it list changes out of order.
 */
import { describe, expect, it } from 'vitest';
import { bookMessageForm, bookStateForm } from '../../../../src/relay/channels/book/relay-form.ts';

const state = {
  bids: [['0.50000000', '1.5']],
  asks: [['0.60000000', '2']],
  last_price: '0.55000000',
};

describe('bookStateForm', () => {
  it('takes levels priced with eight places, a negative zero and leading zeros among them', () => {
    expect(bookStateForm.safeParse(state).success).toBe(true);
    expect(
      bookStateForm.safeParse({
        ...state,
        bids: [
          ['-0.00000000', '1'],
          ['00.40000000', '0'],
        ],
      }).success,
    ).toBe(true);
  });

  it('refuses a level or a last price in another spelling, naming the field', () => {
    const shortLevel = bookStateForm.safeParse({ ...state, bids: [['0.5', '1']] });
    expect(shortLevel.success).toBe(false);
    expect(shortLevel.error?.issues[0]?.path).toEqual(['bids', 0, 0]);
    expect(bookStateForm.safeParse({ ...state, last_price: '0.55' }).success).toBe(false);
    expect(bookStateForm.safeParse({ ...state, asks: [['1e-1', '1']] }).success).toBe(false);
  });

  it('holds a logged update to the same form', () => {
    const update = {
      type: 'update',
      channel: 'book',
      market: 'm',
      epoch: 'e1',
      seq: 2,
      ts: '2026-12-06T00:00:00.000Z',
      rts: '2026-12-06T00:00:00.001Z',
      depth: 10,
      data: { bids: [['0.5', '0']], asks: [] },
      checksum: 1,
    };
    expect(bookMessageForm('update').safeParse(update).success).toBe(false);
    const good = { ...update, data: { bids: [['0.50000000', '0']], asks: [] } };
    expect(bookMessageForm('update').safeParse(good).error?.issues ?? []).toEqual([]);
  });
});
