import { describe, expect, it } from 'vitest';
import { parseClientFrame } from '../../src/ws/frame-parser.ts';

const market = '11111111-1111-4111-8111-111111111111';
const text = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

describe('parseClientFrame', () => {
  it('accepts every op of the protocol', () => {
    expect(parseClientFrame(text({ op: 'ping', id: 7 }), false)).toEqual({
      ok: true,
      request: { op: 'ping', id: 7 },
    });
    const subscribe = {
      op: 'subscribe',
      id: 'a',
      channel: 'book',
      markets: [market],
      depth: 10,
      resume: { [market]: { epoch: 'e', seq: 4 } },
    };
    expect(parseClientFrame(text(subscribe), false)).toEqual({ ok: true, request: subscribe });
    expect(parseClientFrame(text({ op: 'unsubscribe', channel: 'price', markets: [market] }), false).ok).toBe(
      true,
    );
  });

  it.each([
    ['not JSON', 'not json', 'frame is not JSON', undefined],
    ['a JSON array', '[1]', 'frame must be a JSON object', undefined],
    ['an unknown op', { op: 'dance', id: 3 }, 'unknown op "dance"', 3],
    ['a missing op', { id: 'x' }, 'unknown op null', 'x'],
    [
      'a market that is not a UUID',
      { op: 'subscribe', id: 1, channel: 'book', markets: ['abc'] },
      'markets.0: not a UUID',
      1,
    ],
    ['no markets', { op: 'subscribe', channel: 'book', markets: [] }, 'markets:', undefined],
    ['a wrong field type', { op: 'subscribe', channel: 'book', markets: market }, 'markets:', undefined],
    [
      'a rest subscribe naming its paths `markets`',
      { op: 'subscribe', id: 2, channel: 'rest', markets: ['/api/rewards/leaderboard'] },
      'markets: the rest channel names its streams in "paths", not "markets"',
      2,
    ],
    [
      'a rest unsubscribe with both `paths` and `markets`',
      { op: 'unsubscribe', channel: 'rest', paths: ['/api/tokens'], markets: ['/api/tokens'] },
      'names its streams in "paths"',
      undefined,
    ],
    // A JSON escape can spell half a surrogate pair, which no path can be percent-encoded from.
    [
      'a rest path segment holding half a surrogate pair',
      { op: 'subscribe', id: 3, channel: 'rest', paths: ['/api/users/\ud800'] },
      'paths.0: not well-formed Unicode',
      3,
    ],
    [
      'a rest query value holding half a surrogate pair',
      { op: 'subscribe', id: 4, channel: 'rest', paths: ['/api/search?q=a\udc00'] },
      'paths.0: not well-formed Unicode',
      4,
    ],
    // JSON can name an object's own `toString` and `valueOf`: no text can be made of such a channel.
    [
      'a channel no text can be made of',
      { op: 'subscribe', id: 5, channel: { toString: 1, valueOf: 1 }, markets: [market] },
      'channel:',
      5,
    ],
    [
      'a depth the protocol does not offer',
      { op: 'subscribe', channel: 'book', markets: [market], depth: 20 },
      'depth:',
      undefined,
    ],
  ])('rejects %s as bad_request, echoing a usable id', (_name, frame, message, id) => {
    const parsed = parseClientFrame(text(frame), false);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.message).toContain(message);
    expect(parsed.id).toBe(id);
  });

  it('checks stream ids by channel and spells them in lower case, resume keys too', () => {
    const feed = '0xAbC123';
    const parsed = parseClientFrame(
      text({
        op: 'subscribe',
        channel: 'oracle',
        markets: [feed],
        resume: { [feed]: { epoch: 'e', seq: 2 } },
      }),
      false,
    );
    expect(parsed).toEqual({
      ok: true,
      request: {
        op: 'subscribe',
        channel: 'oracle',
        markets: ['0xabc123'],
        resume: { '0xabc123': { epoch: 'e', seq: 2 } },
      },
    });
    const upper = market.toUpperCase();
    expect(parseClientFrame(text({ op: 'unsubscribe', channel: 'market', markets: [upper] }), false)).toEqual(
      {
        ok: true,
        request: { op: 'unsubscribe', channel: 'market', markets: [market] },
      },
    );
    expect(
      parseClientFrame(text({ op: 'subscribe', channel: 'probabilities', markets: ['all'] }), false).ok,
    ).toBe(true);
    // An unknown channel keeps its ids as sent: the answer is unknown_channel, not bad_request.
    expect(parseClientFrame(text({ op: 'subscribe', channel: 'tickers', markets: ['x'] }), false)).toEqual({
      ok: true,
      request: { op: 'subscribe', channel: 'tickers', markets: ['x'] },
    });
  });

  it.each([
    ['probabilities', [market], 'markets.0: the probabilities channel has one stream: "all"'],
    ['probabilities', ['ALL'], 'markets.0: the probabilities channel has one stream: "all"'],
    ['oracle', ['0x'], 'markets.0: not an oracle feed id (0x and hex digits)'],
    ['oracle', [market], 'markets.0: not an oracle feed id (0x and hex digits)'],
    ['trades', ['0xabc'], 'markets.0: not a UUID'],
    ['orders', [market, 'all'], 'markets.1: not a UUID'],
  ])('rejects a %s id of another kind (%j)', (channel, markets, message) => {
    expect(parseClientFrame(text({ op: 'subscribe', id: 1, channel, markets }), false)).toEqual({
      ok: false,
      message,
      id: 1,
    });
  });

  it('rejects more than 100 markets', () => {
    const markets = Array.from({ length: 101 }, () => market);
    const parsed = parseClientFrame(text({ op: 'subscribe', channel: 'book', markets }), false);
    expect(parsed.ok).toBe(false);
  });

  it('rejects binary frames', () => {
    expect(parseClientFrame(text({ op: 'ping' }), true).ok).toBe(false);
  });
});
