/**
 * @module relay/channels/trades/relay-since-record
 * A market's trades since a time or an `activity_id` (docs/protocol.md "History since a time"):
 * from upstream's activity pages (./relay-since.ts), and on a relay that records, from the record
 * of the market's `trades` stream for what it holds, upstream's pages read only for what it never
 * recorded (docs/history.md "Since").
 *
 * The record's last unbroken run (a snapshot, then every message after it up to the subscriber's
 * join) holds what the stream sent: its snapshot the newest entries of the listing then, every
 * later entry since, less any a truncated poll lost. So the run is the listing from its oldest
 * entry, the anchor, on, and the listing holds at least as many entries from the anchor on as the
 * run does: newest first, the anchor stands at offset `run - 1` or later (entries only move to
 * higher offsets); oldest first, at `length - run` or earlier (a trim moves entries to lower
 * offsets). The read starts there and takes only the entries older than the anchor. Where it
 * cannot place the anchor (not found where it must be, an order neither the entries' times nor
 * the recorded ones tell), it reads the listing as without a record and cuts it at the anchor.
 *
 * A run that ends before the subscriber's join (another relay's, in a cluster sharing the record,
 * or this relay's before it lost the lease or restarted) answers for the trades it holds all the
 * same: upstream's listing is read only for the trades after its newest (`since` that trade's
 * `activity_id`) and before its oldest, and the three are joined by `activity_id`, each once.
 */
import type { SinceSpec } from '../../../../packages/protocol/src/channels/history.ts';
import {
  SINCE_MAX_AGE_MS,
  SINCE_MAX_TRADES,
} from '../../../../packages/protocol/src/channels/trades/since.ts';
import type { TradeEntry, TradesData } from '../../../../packages/protocol/src/channels/trades/trades.ts';
import { type ReadPage, readPages, type ServedPage } from '../../../upstream/paging.ts';
import type { RecordedHistory } from '../relay-definition.ts';
import { ACTIVITY_PAGE_SIZE, type ActivityOrder, orderOf } from './relay-activity.ts';
import { type ActivityUpstream, activityPages } from './relay-activity-pages.ts';
import {
  before,
  notFound,
  type Outcome,
  readOldestFirst,
  readSince,
  type SinceRead,
  timeOf,
  tooManyOutcome,
} from './relay-since.ts';

/**
 * `market`'s trades since `since` at relay time `now`, each upstream page through `request`
 * (which gives it its slot of the upstream budget), the record's run first when there is one.
 */
export async function readMarketSince(
  upstream: ActivityUpstream,
  market: string,
  since: SinceSpec,
  now: number,
  request: <T>(ask: () => Promise<T>) => Promise<T>,
  record?: RecordedHistory,
): Promise<SinceRead> {
  // The budget's slot counts each request: none is counted here.
  const page = activityPages(upstream, market, () => undefined);
  const read: ReadPage<TradeEntry> = (offset, limit) => request(() => page(offset, limit));
  const after = since.kind === 'time' ? since.at : now - SINCE_MAX_AGE_MS;
  const run = await record?.lastRun('trades', market, after);
  // The record holds what the trades stream sent: its data has the channel's shape.
  const recorded = run === undefined ? [] : (run.data as TradesData[]).flatMap((data) => data.trades);
  if (recorded.length === 0) return readSince(read, since, now);
  return run?.reachesJoin === true
    ? readWithRecord(read, since, now, recorded)
    : readAroundRecord(read, since, now, recorded);
}

/**
 * The trades since `since` from a recorded run that ends before the join: upstream's after the
 * run's newest trade, the run's, and upstream's before its oldest, each id once. Where upstream's
 * listing does not hold the run's newest trade (past the look-back), it is read as without a record.
 */
export async function readAroundRecord(
  read: ReadPage<TradeEntry>,
  since: SinceSpec,
  now: number,
  run: readonly TradeEntry[],
): Promise<SinceRead> {
  const recorded = uniqueIds(run);
  const newest = recorded.at(-1)!;
  let pages = 0;
  const counted: ReadPage<TradeEntry> = (offset, limit) => {
    pages += 1;
    return read(offset, limit);
  };
  const withoutRecord = async (): Promise<SinceRead> => ({
    ...(await readSince(counted, since, now)),
    pages,
  });
  // The run holds nothing asked for.
  if (since.kind === 'time' && since.at > timeOf(newest)) return withoutRecord();
  const tail = await readSince(counted, { kind: 'id', id: newest.activity_id }, now);
  if (!tail.ok) return withoutRecord();
  const after = tail.trades.filter((entry) => since.kind === 'id' || timeOf(entry) >= since.at);
  const named = since.kind === 'id' ? after.findIndex((entry) => entry.activity_id === since.id) : -1;
  const upTo: Outcome =
    named >= 0
      ? { ok: true, trades: [] }
      : await readWithRecord(counted, since, now, recorded, tail.trades.length);
  if (!upTo.ok) return { ...upTo, pages };
  const ids = new Set(upTo.trades.map((entry) => entry.activity_id));
  const trades = [...upTo.trades, ...after.slice(named + 1).filter((entry) => !ids.has(entry.activity_id))];
  const refused =
    trades.length > SINCE_MAX_TRADES ? tooManyOutcome(since, trades.at(-SINCE_MAX_TRADES)) : undefined;
  if (refused !== undefined && !refused.ok) return { ...refused, pages };
  return { ok: true, pages, trades, ...(upTo.startsAt === undefined ? {} : { startsAt: upTo.startsAt }) };
}

/**
 * The trades since `since`: upstream's older than `run`'s oldest entry, then `run`'s (the
 * recorded trades, oldest first, an id possibly repeated), each id once. `newer`: how many trades
 * upstream lists after the run's newest (read already), which place its oldest that much further.
 */
export async function readWithRecord(
  read: ReadPage<TradeEntry>,
  since: SinceSpec,
  now: number,
  run: readonly TradeEntry[],
  newer = 0,
): Promise<SinceRead> {
  const recorded = uniqueIds(run);
  const anchor = recorded[0]!;
  const oldest = now - SINCE_MAX_AGE_MS;
  const named = since.kind === 'id' ? recorded.findIndex((entry) => entry.activity_id === since.id) : -1;
  const fromRecord =
    since.kind === 'time' ? recorded.filter((entry) => timeOf(entry) >= since.at) : recorded.slice(named + 1);
  // What the record alone answers: an id it holds, a time after its oldest trade (at it, a trade of
  // the same millisecond may stand before it in upstream's listing).
  if (named >= 0 || (since.kind === 'time' && timeOf(anchor) < since.at))
    return joined(since, { ok: true, trades: [] }, fromRecord, anchor, 0);
  let pages = 0;
  const counted: ReadPage<TradeEntry> = (offset, limit) => {
    pages += 1;
    return read(offset, limit);
  };
  const ids = new Set(recorded.map((entry) => entry.activity_id));
  let older = await readOlder(counted, since, oldest, anchor, ids, newer);
  if (older === undefined) {
    const whole = await readSince(counted, since, now);
    older = whole.ok
      ? (cutAt(whole, anchor) ?? {
          ...whole,
          trades: whole.trades.filter(
            (entry) => !ids.has(entry.activity_id) && timeOf(entry) <= timeOf(anchor),
          ),
        })
      : whole;
  }
  return joined(since, older, fromRecord, anchor, pages);
}

/** Upstream's part and the record's, one read; where upstream's listing ended short, said so. */
function joined(
  since: SinceSpec,
  older: Outcome,
  fromRecord: TradeEntry[],
  anchor: TradeEntry,
  pages: number,
): SinceRead {
  if (!older.ok) return { ...older, pages };
  const trades = [...older.trades, ...fromRecord];
  const refused =
    trades.length > SINCE_MAX_TRADES ? tooManyOutcome(since, trades.at(-SINCE_MAX_TRADES)) : undefined;
  if (refused !== undefined && !refused.ok) return { ...refused, pages };
  const startsAt = older.startsAt === undefined ? undefined : timeOf(trades[0] ?? anchor);
  return { ok: true, pages, trades, ...(startsAt === undefined ? {} : { startsAt }) };
}

/** Upstream's entries older than `anchor` since `since`, oldest first; undefined where the anchor is not placed. */
async function readOlder(
  read: ReadPage<TradeEntry>,
  since: SinceSpec,
  oldest: number,
  anchor: TradeEntry,
  recorded: ReadonlySet<string>,
  newer: number,
): Promise<Outcome | undefined> {
  const skip = recorded.size - 1 + newer;
  const head = await read(skip, ACTIVITY_PAGE_SIZE);
  if (head.entries.length === 0) return undefined;
  const alone = head.entries.length === 1 && head.entries[0]!.activity_id === anchor.activity_id;
  // The anchor alone at the listing's end: nothing is older, whichever the order.
  const order =
    orderAt(head.entries, anchor, recorded) ?? (alone && !head.hasMore ? 'newest-first' : undefined);
  if (order === 'newest-first') return olderNewestFirst(read, since, oldest, anchor, skip, head);
  if (order === undefined) return undefined;
  const known = head.hasMore ? skip + head.entries.length : { length: skip + head.entries.length };
  const outcome = await readOldestFirst(read, since, oldest, known, (length) => length - skip);
  return outcome.ok ? cutAt(outcome, anchor) : outcome;
}

/** The listing's order, by the entries' times, else by where recorded (newer) entries stand beside the anchor. */
function orderAt(
  entries: readonly TradeEntry[],
  anchor: TradeEntry,
  recorded: ReadonlySet<string>,
): ActivityOrder | undefined {
  const timed = orderOf(entries);
  if (timed !== undefined) return timed;
  const at = entries.findIndex((entry) => entry.activity_id === anchor.activity_id);
  if (at < 0) return undefined;
  if (entries.slice(0, at).some((entry) => recorded.has(entry.activity_id))) return 'newest-first';
  if (entries.slice(at + 1).some((entry) => recorded.has(entry.activity_id))) return 'oldest-first';
  return undefined;
}

/** Newest first from `skip`: past the anchor, the entries until one before `since`. */
async function olderNewestFirst(
  read: ReadPage<TradeEntry>,
  since: SinceSpec,
  oldest: number,
  anchor: TradeEntry,
  skip: number,
  head: ServedPage<TradeEntry>,
): Promise<Outcome | undefined> {
  const older: TradeEntry[] = [];
  const ids = new Set<string>();
  let passed = false;
  let misplaced = false;
  let scanned = 0;
  let reached = false;
  let named = false;
  let tooMany = false;
  await readPages(
    async (offset, limit) => (offset === skip ? head : read(offset, limit)),
    { from: skip, limit: ACTIVITY_PAGE_SIZE, maxEntries: Number.POSITIVE_INFINITY },
    (page) => {
      for (const entry of page.entries) {
        if (!passed) {
          passed = entry.activity_id === anchor.activity_id;
          // An older entry before the anchor: the offset was past it after all.
          scanned += 1;
          if (!passed && (timeOf(entry) < timeOf(anchor) || scanned > SINCE_MAX_TRADES)) {
            misplaced = true;
            return true;
          }
          continue;
        }
        if (ids.has(entry.activity_id)) continue;
        const verdict = before(entry, since, oldest);
        if (verdict !== false) {
          named = verdict === 'named';
          reached = true;
          return true;
        }
        ids.add(entry.activity_id);
        older.push(entry);
        if (older.length > SINCE_MAX_TRADES) {
          tooMany = true;
          return true;
        }
      }
      return false;
    },
  );
  if (misplaced || !passed) return undefined;
  if (tooMany) return tooManyOutcome(since, older[SINCE_MAX_TRADES - 1]);
  if (since.kind === 'id' && !named) return notFound(since);
  const trades = older.reverse();
  return reached ? { ok: true, trades } : { ok: true, trades, startsAt: timeOf(trades[0] ?? anchor) };
}

/** The trades before `anchor`; undefined when it is not among them. */
function cutAt(outcome: Outcome & { ok: true }, anchor: TradeEntry): Outcome | undefined {
  const at = outcome.trades.findIndex((entry) => entry.activity_id === anchor.activity_id);
  return at < 0 ? undefined : { ...outcome, trades: outcome.trades.slice(0, at) };
}

function uniqueIds(entries: readonly TradeEntry[]): TradeEntry[] {
  const seen = new Set<string>();
  return entries.filter((entry) => {
    if (seen.has(entry.activity_id)) return false;
    seen.add(entry.activity_id);
    return true;
  });
}
