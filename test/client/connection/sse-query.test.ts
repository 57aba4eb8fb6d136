/**
 * The query of the SDK's SSE responses (packages/client/src/connection/sse-query.ts): each option a
 * `subscribe` carries becomes the relay's query parameter of the same name, a full book's depth
 * `full`; only the options that name a stream (a book's depth) tell two streams apart.
 */
import { describe, expect, it } from 'vitest';
import {
  optionsOf,
  queryEntries,
  streamOptionsKey,
} from '../../../packages/client/src/connection/sse-query.ts';

describe('SSE query of a subscription', () => {
  it('names every option as the relay reads it, a full book as depth=full', () => {
    const options = optionsOf({
      channel: 'book',
      depth: 10,
      interval: 1_000,
      threshold: '0.05',
      since: '2026-12-01T00:00:00.000Z',
    });
    expect(queryEntries(options)).toEqual([
      ['depth', '10'],
      ['interval', '1000'],
      ['threshold', '0.05'],
      ['since', '2026-12-01T00:00:00.000Z'],
    ]);
    expect(queryEntries(optionsOf({ channel: 'book' }))).toEqual([['depth', 'full']]);
    expect(queryEntries(optionsOf({ channel: 'book', depth: null }))).toEqual([['depth', 'full']]);
    expect(queryEntries(optionsOf({ channel: 'price' }))).toEqual([]);
  });

  it('tells streams apart by depth, not by how a subscriber gets them', () => {
    const paced = streamOptionsKey(optionsOf({ channel: 'book', depth: 10, interval: 1_000 }));
    expect(streamOptionsKey(optionsOf({ channel: 'book', depth: 10 }))).toBe(paced);
    expect(streamOptionsKey(optionsOf({ channel: 'book', depth: 50, interval: 1_000 }))).not.toBe(paced);
    expect(streamOptionsKey(optionsOf({ channel: 'book' }))).toBe(
      streamOptionsKey(optionsOf({ channel: 'book', depth: null, since: '2026-12-01T00:00:00Z' })),
    );
  });
});
