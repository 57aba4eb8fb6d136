import { describe, expect, it } from 'vitest';
import { applyPriceUpdate } from '../../packages/protocol/src/channels/price/price.ts';
import { diffPrice } from '../../src/relay/channels/price/codec.ts';

describe('applyPriceUpdate', () => {
  it('replaces changed fields and removes fields sent as null', () => {
    const state = { best_bid: '0.40000000', best_ask: '0.60000000', spread: '0.20000000' };
    expect(applyPriceUpdate(state, { best_bid: '0.41000000', spread: null })).toEqual({
      best_bid: '0.41000000',
      best_ask: '0.60000000',
    });
  });

  it('inverts diffPrice', () => {
    const prev = { best_bid: '0.40000000', last_price: '0.50000000' };
    const next = { best_ask: '0.70000000', last_price: '0.55000000', midpoint_price: '0.55000000' };
    expect(applyPriceUpdate(prev, diffPrice(prev, next)!)).toEqual(next);
  });
});
