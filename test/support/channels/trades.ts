/**
 * @module test/support/channels/trades
 * What a client of the `trades` channel received, against the simulator's activity log, and the
 * harness setup the trades end-to-end tests share (docs/protocol.md "`trades` data").
 */
import { expect } from 'vitest';
import type { TradeEntry } from '../../../packages/protocol/src/protocol/messages.ts';
import type { Relay } from '../../../src/relay-server.ts';
import type { SimulatorHandle } from '../../../src/sim/server.ts';
import { type Message, ProtocolClient } from '../clients/protocol-client.ts';
import type { Closable, Harness } from '../harness.ts';
import { waitFor } from '../wait-for.ts';
import { ids } from './trades-listing.ts';

/** The trades messages of one market a client received, in order. */
export function tradeMessages(client: ProtocolClient, market: string): Message[] {
  return client.messages.filter(
    (message) =>
      (message.type === 'snapshot' || message.type === 'update') &&
      message.channel === 'trades' &&
      message.market === market,
  );
}

export const entriesOf = (messages: Message[]): TradeEntry[] =>
  messages.flatMap((message) => (message.data as { trades: TradeEntry[] }).trades);

/** The simulator's activity log, oldest first: what upstream's activity pages list, newest first. */
export const upstreamIds = (sim: SimulatorHandle, market: string): string[] =>
  sim.market.market(market)!.trades.map((trade) => trade.id);

/**
 * No printed trades but the test's own; trades streams are polled at the price interval, which a
 * busy test machine could miss three times over at the harness's 20 ms (a false `stale`).
 */
export const setup = { sim: { markets: 3, tradeFlow: () => undefined }, relay: { pricePollMs: 100 } };

/** Subscribes a new client to `market`'s trades and waits for the snapshot. */
export async function subscribeTrades(
  opened: Closable[],
  relay: Relay,
  market: string,
): Promise<ProtocolClient> {
  const client = await ProtocolClient.connect(relay.url);
  opened.push(client);
  expect(await client.request({ op: 'subscribe', channel: 'trades', markets: [market] })).toMatchObject({
    type: 'subscribed',
    channel: 'trades',
    markets: [market],
  });
  await waitFor('the trades snapshot', () => tradeMessages(client, market).length > 0);
  return client;
}

/**
 * Upstream's activity listing read page by page over HTTP, oldest first (by the entries' times),
 * each `activity_id` once: newest first, a trade listed between two page reads (the simulator's
 * book fills one now and then) moves the older entries to higher offsets, so the next page starts
 * with the previous one's tail again.
 */
export async function upstreamListing(sim: SimulatorHandle, market: string): Promise<TradeEntry[]> {
  const entries: TradeEntry[] = [];
  const listed = new Set<string>();
  for (let offset = 0; ; ) {
    const response = await fetch(`${sim.url}/api/markets/${market}/activity?limit=100&offset=${offset}`);
    const page = (await response.json()) as { activity: TradeEntry[]; pagination: { hasMore: boolean } };
    for (const entry of page.activity) {
      if (listed.has(entry.activity_id)) continue;
      listed.add(entry.activity_id);
      entries.push(entry);
    }
    offset += page.activity.length;
    if (!page.pagination.hasMore || page.activity.length === 0) break;
  }
  const time = (entry: TradeEntry) => Date.parse(entry.activity_timestamp);
  const newestFirst = entries.length > 1 && time(entries[0]!) > time(entries.at(-1)!);
  return newestFirst ? entries.reverse() : entries;
}

/** Waits until the client has received the newest upstream entry. */
export async function caughtUp(harness: Harness, client: ProtocolClient, market: string): Promise<void> {
  const newest = upstreamIds(harness.sim, market).at(-1);
  await waitFor(`the client to receive ${newest}`, () =>
    ids(entriesOf(tradeMessages(client, market))).includes(newest!),
  );
}

/** The relay's count of trades polls that stopped at their bound. */
export async function truncatedPolls(relay: Relay): Promise<number> {
  const text = await (await fetch(`${relay.url}/metrics`)).text();
  return Number(/^market_relay_trades_truncated_polls_total (\S+)$/m.exec(text)?.[1]);
}
