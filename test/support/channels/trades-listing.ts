/**
 * @module test/support/channels/trades-listing
 * Upstream's activity listing of one market held in memory, for the unit tests of reading trades
 * since a time or an `activity_id` (relay/channels/trades/relay-since*.ts): trades one second apart
 * up to {@link NOW}, served newest first or oldest first under pages of at most `pageMax`, every
 * request kept.
 */
import type { TradeEntry } from '../../../packages/protocol/src/channels/trades/trades.ts';

export const NOW = Date.parse('2026-01-01T12:00:00Z');

export function trade(n: number, at: number): TradeEntry {
  return {
    activity_id: `t${n}`,
    activity_type: 'TRADE',
    price: '0.5',
    size: '1',
    total_value: '0.5',
    activity_timestamp: new Date(at).toISOString(),
  };
}

export const ids = (entries: readonly TradeEntry[]): string[] => entries.map((entry) => entry.activity_id);

/** `count` trades one second apart up to NOW, oldest first in `log`, served in `order`. */
export function tradeListing(count: number, order: 'newest-first' | 'oldest-first', pageMax: number) {
  const log: TradeEntry[] = Array.from({ length: count }, (_, i) => trade(i, NOW - (count - i) * 1000));
  const asked: { offset: number; limit: number }[] = [];
  let onRequest = () => {};
  return {
    log,
    /** Every request, in order. */
    asked,
    get requests() {
      return asked.length;
    },
    /** Runs before each request is answered (trades arriving while the read pages). */
    set onRequest(run: () => void) {
      onRequest = run;
    },
    read: async (offset: number, limit: number) => {
      asked.push({ offset, limit });
      onRequest();
      const view = order === 'newest-first' ? [...log].reverse() : log;
      const entries = view.slice(offset, offset + Math.min(limit, pageMax));
      return { entries, hasMore: offset + entries.length < view.length };
    },
    /** Whether a page (not a one-entry probe) lies in the listing's part from log index `from` to `to` (exclusive). */
    within: (page: { offset: number; limit: number }, from: number, to: number) => {
      const start = order === 'newest-first' ? count - to : from;
      return page.limit > 1 && page.offset >= start && page.offset + pageMax <= start + (to - from);
    },
  };
}
