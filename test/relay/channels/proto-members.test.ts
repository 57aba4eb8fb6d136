/**
 * Upstream's members named `__proto__` are data like any other (JSON.parse keeps them as members):
 * the `market` channel keeps them in its record, its updates and the SDK's state, as upstream
 * served them; the `probabilities` map, keyed by market UUID, refuses a body with such a key as it
 * refuses any key that is no UUID (zod alone would drop the key unseen; docs/upstream.md).
 */
import { describe, expect, it } from 'vitest';
import { applyMarketUpdate } from '../../../packages/protocol/src/channels/market/wire.ts';
import type { MarketData } from '../../../packages/protocol/src/protocol/messages.ts';
import { diffMarket } from '../../../src/relay/channels/market/diff.ts';
import { judgeExchange, type UpstreamRequest } from '../../../src/upstream/outcome.ts';
import { marketResponse, probabilitiesResponse } from '../../../src/upstream/schemas.ts';

const market = '3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f';
const record = (extra: string) =>
  `{"market_id":"${market}","market_name":"btc","title":"BTC","question":"BTC?","status":"ACTIVE",` +
  `"exchange_address":"0xab","oracle_address":"0xcd","oracle_feed_id":"0xef","probability":0.5,` +
  `"volume":10,"expiration_timestamp":"2026-12-31T00:00:00.000Z"${extra}}`;
const body = (extra: string) => JSON.parse(`{"success":true,"market":${record(extra)}}`) as unknown;

describe('members named __proto__', () => {
  it('the market record keeps them, nested ones too, exactly as upstream served it', () => {
    const served = body(',"__proto__":{"tier":"gold"},"meta":{"__proto__":1}');
    const parsed = marketResponse.parse(served);
    expect(Object.hasOwn(parsed.market, '__proto__')).toBe(true);
    expect(JSON.stringify(parsed)).toBe(JSON.stringify(served));
    expect(Object.getPrototypeOf(parsed.market)).toBe(Object.prototype);
  });

  it('a market record still fails on a field of the wrong type, naming it', () => {
    const wrong = record(',"__proto__":1').replace('"volume":10', '"volume":"10"');
    const result = marketResponse.safeParse(JSON.parse(`{"success":true,"market":${wrong}}`));
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['market', 'volume']);
  });

  it('the market update carries a changed __proto__ member, and the SDK applies it as a member', () => {
    const before = marketResponse.parse(body(',"__proto__":{"tier":"gold"}')).market as MarketData;
    const after = marketResponse.parse(body(',"__proto__":{"tier":"silver"}')).market as MarketData;
    const update = diffMarket(before, after);
    expect(JSON.stringify(update)).toBe('{"__proto__":{"tier":"silver"}}');
    // What a client holds: the update as it arrives, parsed from the wire.
    const applied = applyMarketUpdate(before, JSON.parse(JSON.stringify(update)));
    expect(JSON.stringify(applied)).toBe(JSON.stringify(after));
    expect(Object.getPrototypeOf(applied)).toBe(Object.prototype);
    const gone = applyMarketUpdate(after, JSON.parse('{"__proto__":null}'));
    expect(Object.hasOwn(gone, '__proto__')).toBe(false);
  });

  it('the probabilities map refuses a key that is no market UUID, __proto__ as any other', () => {
    const entry =
      '{"midpoint":0.5,"best_bid":0.4,"best_ask":0.6,"last_trade_price":0.5,"timestamp":"2026-01-01T00:00:00.000Z"}';
    const request: UpstreamRequest<unknown> = {
      endpoint: 'GET /api/markets/probabilities',
      method: 'GET',
      path: '/api/markets/probabilities',
      schema: probabilitiesResponse,
    };
    const judged = (key: string) => {
      const body = Buffer.from(`{"success":true,"probabilities":{"${market}":${entry},"${key}":${entry}}}`);
      return judgeExchange(
        request,
        {
          kind: 'answered',
          status: 200,
          retryAfter: undefined,
          body,
          wireBytes: body.length,
          viaRelay: undefined,
        },
        30_000,
        0,
      );
    };
    expect(judged('__proto__')).toMatchObject({ ok: false, outcome: 'schema_error' });
    expect(judged('not-a-market')).toMatchObject({ ok: false, outcome: 'schema_error' });
    expect(judged(market.replace('3f', '4f'))).toMatchObject({ ok: true });
  });
});
