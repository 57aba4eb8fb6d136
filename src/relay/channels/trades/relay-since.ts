/**
 * @module relay/channels/trades/relay-since
 * Reading a market's trades since a time or an `activity_id` from upstream's activity pages
 * (docs/protocol.md "History since a time"), free of I/O: the relay's session joins the live stream
 * first and merges this read with what the stream delivers meanwhile (relay/session/since-seam.ts).
 *
 * Upstream's listing order is not shown; it is read from the entries' times
 * (./relay-activity.ts `orderOf`). Newest first, the read pages from offset 0 until an entry older
 * than `since` (or the named entry); trades arriving meanwhile push entries to higher offsets, so a
 * page may repeat the previous one's tail (skipped by id) and nothing is skipped over; entries newer
 * than the first page are left to the live stream. Oldest first, the end of the listing is found by
 * galloping and bisecting on `offset` with one-entry pages (activity pages carry no total), then
 * pages are read backwards from it; a log trimmed at its old end moves entries to lower offsets, so
 * a page read backwards may repeat entries (skipped by id) and again nothing is skipped over.
 * On a relay that records, ./relay-since-record.ts reads only what the record does not hold.
 */
import type { SinceSpec } from '../../../../packages/protocol/src/channels/history.ts';
import {
  SINCE_MAX_AGE_MS,
  SINCE_MAX_TRADES,
} from '../../../../packages/protocol/src/channels/trades/since.ts';
import type { TradeEntry, TradesData } from '../../../../packages/protocol/src/channels/trades/trades.ts';
import { type ReadPage, readPages } from '../../../upstream/paging.ts';
import type { HistoryRead } from '../relay-definition.ts';
import { ACTIVITY_PAGE_SIZE, type ActivityOrder, orderOf } from './relay-activity.ts';

/** Requests spent at most finding the end of an oldest-first listing (reaches ~2^30 entries). */
export const SINCE_MAX_PROBES = 64;

export type SinceRead = HistoryRead<TradesData>;

export const timeOf = (entry: TradeEntry): number => Date.parse(entry.activity_timestamp);

/** Whether `entry` is before what `since` asks for (the named entry itself included). */
export function before(entry: TradeEntry, since: SinceSpec, oldest: number): boolean | 'named' {
  if (since.kind === 'id') return entry.activity_id === since.id ? 'named' : timeOf(entry) < oldest;
  return timeOf(entry) < since.at;
}

/**
 * Every entry upstream lists since `since`, oldest first, each id once; `now` is the relay's time
 * (an `activity_id` is looked for only among the trades of the last SINCE_MAX_AGE_MS).
 */
export async function readSince(
  read: ReadPage<TradeEntry>,
  since: SinceSpec,
  now: number,
): Promise<SinceRead> {
  let pages = 0;
  const counted: ReadPage<TradeEntry> = (offset, limit) => {
    pages += 1;
    return read(offset, limit);
  };
  const oldest = now - SINCE_MAX_AGE_MS;
  const head = await counted(0, ACTIVITY_PAGE_SIZE);
  let order: ActivityOrder | undefined = orderOf(head.entries);
  let second: { entries: readonly TradeEntry[]; hasMore: boolean } | undefined;
  if (order === undefined && head.hasMore && head.entries.length > 0) {
    second = await counted(head.entries.length, ACTIVITY_PAGE_SIZE);
    order = orderOf([...head.entries, ...second.entries]);
  }
  const result =
    order === 'oldest-first' && head.hasMore
      ? await readOldestFirst(counted, since, oldest, head.entries.length)
      : order === 'oldest-first'
        ? fromOldestFirst([...head.entries], since, oldest, true)
        : await readNewestFirst(counted, since, oldest, head, second);
  return { ...result, pages };
}

export type Outcome =
  | { ok: true; trades: TradeEntry[]; startsAt?: number }
  | { ok: false; reason: 'too_many' | 'not_found'; message: string };

async function readNewestFirst(
  read: ReadPage<TradeEntry>,
  since: SinceSpec,
  oldest: number,
  head: { entries: readonly TradeEntry[]; hasMore: boolean },
  second: { entries: readonly TradeEntry[]; hasMore: boolean } | undefined,
): Promise<Outcome> {
  const newestFirst: TradeEntry[] = [];
  const collected = new Set<string>();
  const headNewestAt = Math.max(...head.entries.map(timeOf));
  let named = false;
  let reached = false;
  let tooMany = false;
  const early = new Map([[0, head]]);
  if (second !== undefined) early.set(head.entries.length, second);
  await readPages(
    async (offset, limit) => early.get(offset) ?? read(offset, limit),
    { limit: ACTIVITY_PAGE_SIZE, maxEntries: Number.POSITIVE_INFINITY },
    (page) => {
      for (const entry of page.entries) {
        if (collected.has(entry.activity_id) || timeOf(entry) > headNewestAt) continue;
        const verdict = before(entry, since, oldest);
        if (verdict !== false) {
          named = verdict === 'named';
          reached = true;
          return true;
        }
        collected.add(entry.activity_id);
        newestFirst.push(entry);
        if (newestFirst.length > SINCE_MAX_TRADES) {
          tooMany = true;
          return true;
        }
      }
      return false;
    },
  );
  if (tooMany) return tooManyOutcome(since, newestFirst[SINCE_MAX_TRADES - 1]);
  if (since.kind === 'id' && !named) return notFound(since);
  const trades = newestFirst.reverse();
  // The listing ended before a trade older than the time: it starts no earlier than its oldest trade.
  return reached ? { ok: true, trades } : { ok: true, trades, startsAt: listingStart(trades) };
}

/**
 * The listing's length: `known` entries exist (the first page served them and said there are
 * more), then one-entry pages at doubling offsets until one is past the end, then bisection.
 */
async function listingLength(read: ReadPage<TradeEntry>, known: number): Promise<number | undefined> {
  let low = known; // the listing holds more than `low` entries
  let high: number | undefined; // and at most `high`
  let probes = 0;
  const probe = async (offset: number): Promise<'inside' | 'last' | 'past'> => {
    probes += 1;
    const page = await read(offset, 1);
    if (page.entries.length === 0) return 'past';
    return page.hasMore ? 'inside' : 'last';
  };
  for (let step = Math.max(1, known); high === undefined; step *= 2) {
    if (probes >= SINCE_MAX_PROBES) return undefined;
    const at = low + step;
    const found = await probe(at);
    if (found === 'last') return at + 1;
    if (found === 'inside') low = at;
    else high = at;
  }
  while (high - low > 1) {
    if (probes >= SINCE_MAX_PROBES) return undefined;
    const middle = Math.floor((low + high) / 2);
    const found = await probe(middle);
    if (found === 'last') return middle + 1;
    if (found === 'inside') low = middle;
    else high = middle;
  }
  return high;
}

/**
 * Oldest first: the entries since `since`, read backwards from the listing's end, or from
 * `endOf(length)` (exclusive) when given (the entries after it are not wanted). `known`: how many
 * entries the listing holds at least (its end is then found), or its length when already known.
 */
export async function readOldestFirst(
  read: ReadPage<TradeEntry>,
  since: SinceSpec,
  oldest: number,
  known: number | { length: number },
  endOf?: (length: number) => number,
): Promise<Outcome> {
  const length = typeof known === 'number' ? await listingLength(read, known) : known.length;
  if (length === undefined) return tooManyOutcome(since, undefined);
  // Chunks read backwards from the end, each oldest first; the first read from the end runs on to
  // the end as it is then (trades that arrived since the length was found).
  const chunks: TradeEntry[][] = [];
  let readEntries = 0;
  let to = endOf === undefined ? length : Math.max(0, Math.min(length, endOf(length)));
  let first = endOf === undefined;
  for (;;) {
    const from = Math.max(0, to - ACTIVITY_PAGE_SIZE);
    const chunk: TradeEntry[] = [];
    await readPages(
      read,
      { from, limit: ACTIVITY_PAGE_SIZE, maxEntries: first ? Number.POSITIVE_INFINITY : to - from },
      (page) => {
        chunk.push(...page.entries);
        return false;
      },
    );
    first = false;
    chunks.unshift(chunk);
    readEntries += chunk.length;
    const reached = chunk.some((entry) => before(entry, since, oldest) !== false);
    if (reached || from === 0) return fromOldestFirst(chunks.flat(), since, oldest, from === 0);
    if (readEntries > SINCE_MAX_TRADES + ACTIVITY_PAGE_SIZE) {
      const listed = fromOldestFirst(chunks.flat(), since, oldest, false);
      return listed.ok ? tooManyOutcome(since, listed.trades[0]) : listed;
    }
    to = from;
  }
}

/** The entries of an oldest-first run after what `since` names, each id once. */
function fromOldestFirst(
  entries: readonly TradeEntry[],
  since: SinceSpec,
  oldest: number,
  whole: boolean,
): Outcome {
  let start = 0;
  let named = false;
  let reached = false;
  entries.forEach((entry, index) => {
    const verdict = before(entry, since, oldest);
    if (verdict === 'named') named = true;
    if (verdict !== false) {
      start = index + 1;
      reached = true;
    }
  });
  if (since.kind === 'id' && !named)
    return whole || entries.length === 0 ? notFound(since) : tooManyOutcome(since, entries[0]);
  const seen = new Set<string>();
  const trades = entries.slice(start).filter((entry) => {
    if (seen.has(entry.activity_id)) return false;
    seen.add(entry.activity_id);
    return since.kind === 'id' || timeOf(entry) >= since.at;
  });
  if (trades.length > SINCE_MAX_TRADES) return tooManyOutcome(since, trades.at(-SINCE_MAX_TRADES));
  return whole && !reached ? { ok: true, trades, startsAt: listingStart(trades) } : { ok: true, trades };
}

/** Where a listing that ended short of the time asked starts: its oldest trade's time, else now. */
function listingStart(trades: readonly TradeEntry[]): number {
  const first = trades[0];
  return first === undefined ? Date.now() : timeOf(first);
}

export function notFound(since: { id: string }): Outcome {
  return {
    ok: false,
    reason: 'not_found',
    message: `"since": activity_id ${since.id} is not among the market's trades of the last 24 hours`,
  };
}

/** More than SINCE_MAX_TRADES since then: the message names how far back the bound reaches. */
export function tooManyOutcome(since: SinceSpec, oldestKept: TradeEntry | undefined): Outcome {
  const what = since.kind === 'time' ? since.text : `activity_id ${since.id}`;
  const reach =
    oldestKept === undefined
      ? ''
      : `; the ${SINCE_MAX_TRADES} most recent reach back to ${oldestKept.activity_timestamp}`;
  return {
    ok: false,
    reason: 'too_many',
    message: `"since": more than ${SINCE_MAX_TRADES} trades since ${what}${reach}: ask a later since`,
  };
}
