import { describe, expect, it } from 'vitest';
import { diffPrice } from '../../../../src/relay/channels/price/codec.ts';

describe('diffPrice', () => {
  const prev = {
    best_bid: '0.50000000',
    best_ask: '0.60000000',
    midpoint_price: '0.55000000',
    last_price: '0.52000000',
    spread: '0.10000000',
  };

  it('returns null when nothing changed', () => {
    expect(diffPrice(prev, { ...prev })).toBeNull();
    expect(diffPrice({}, {})).toBeNull();
  });

  it('returns only the fields that changed', () => {
    expect(diffPrice(prev, { ...prev, best_bid: '0.51000000', spread: '0.09000000' })).toStrictEqual({
      best_bid: '0.51000000',
      spread: '0.09000000',
    });
  });

  it('sends null for a field upstream stopped sending, and the value when it comes back', () => {
    const { last_price: _dropped, ...withoutLast } = prev;
    expect(diffPrice(prev, withoutLast)).toStrictEqual({ last_price: null });
    expect(diffPrice(withoutLast, prev)).toStrictEqual({ last_price: '0.52000000' });
    expect(diffPrice(prev, {})).toStrictEqual({
      best_bid: null,
      best_ask: null,
      midpoint_price: null,
      last_price: null,
      spread: null,
    });
  });
});
