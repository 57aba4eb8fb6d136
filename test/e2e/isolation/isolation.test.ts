/**
 * Isolation (docs/operations.md "Isolation"): one connection cannot spend the upstream budget that
 * another connection's streams need. An attacker subscribes to hundreds of case variants of real
 * ids and to a thousand random ids a second; a well-behaved client on the same relay keeps its
 * streams live and polled at a good part of their baseline rate, the random ids cost a bounded number of upstream
 * requests, and what the attacker abandoned is never asked for again once it is dropped.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

const BOOK_POLL_MS = 100;

/**
 * The fewest upstream book reads any of `markets` had per second in [from, to): what the budget
 * gave each of them, counted where upstream sees it rather than timed where the client sees it.
 */
function slowestPollRate(
  requests: readonly { path: string; at: number; query: Record<string, string | undefined> }[],
  markets: string[],
  from: number,
  to: number,
): number {
  const polls = markets.map(
    (market) =>
      requests.filter(
        (request) =>
          request.path === '/clob/orderbook' &&
          request.query.market_id === market &&
          request.at >= from &&
          request.at < to,
      ).length,
  );
  return Math.min(...polls) / ((to - from) / 1000);
}

function caseVariants(id: string, count: number): string[] {
  const letters = [...id].map((char, i) => (/[a-f]/.test(char) ? i : -1)).filter((i) => i >= 0);
  const variants: string[] = [];
  for (let mask = 1; variants.length < count && mask < 2 ** Math.min(letters.length, 20); mask++) {
    const chars = [...id];
    letters.forEach((position, bit) => {
      if ((mask >> bit) & 1) chars[position] = chars[position]!.toUpperCase();
    });
    variants.push(chars.join(''));
  }
  return variants;
}

describe('isolation between connections', () => {
  const { opened: clients, start } = useHarness();

  it('keeps a well-behaved client fresh while another floods case variants and random ids', async () => {
    const harness = await start({
      sim: { markets: 16, tickMs: 50 },
      relay: {
        bookPollMs: BOOK_POLL_MS,
        pricePollMs: BOOK_POLL_MS,
        upstreamRps: 100,
        // Stale after ten missed intervals rather than three: on a loaded test machine a slow
        // response must not read as the attacker's doing; the gaps below are the measure.
        tuning: { lingerMs: 100, staleAfterFactor: 10 },
      },
    });
    const { relay, sim } = harness;
    const markets = sim.market.marketIds();
    const mine = markets.slice(0, 3);
    const theirs = markets.slice(3, 13);
    await waitFor('the market catalogue', () => relay.knownMarkets.size === markets.length);

    const good = await ProtocolClient.connect(relay.url);
    clients.push(good);
    await good.request({ op: 'subscribe', channel: 'book', markets: mine });
    await waitFor('snapshots', () => mine.every((market) => good.view('book', market)));
    const baselineFrom = Date.now();
    await waitFor('a baseline', () => Date.now() - baselineFrom >= 1_500, { timeoutMs: 5_000 });
    const attackFrom = Date.now();
    const baseline = slowestPollRate(sim.requests, mine, baselineFrom, attackFrom);

    // The attack: 960 spellings of 10 real markets, then 1,000 random ids a second.
    const attacker = await ProtocolClient.connect(relay.url);
    clients.push(attacker);
    const variants = theirs.flatMap((market) => caseVariants(market, 96));
    for (let i = 0; i < variants.length; i += 100) {
      attacker.send({ op: 'subscribe', channel: 'book', markets: variants.slice(i, i + 100) });
    }
    const randomIds = new Set<string>();
    const flood = setInterval(() => {
      const ids = Array.from({ length: 100 }, () => randomUUID());
      for (const id of ids) randomIds.add(id);
      attacker.send({ op: 'subscribe', channel: 'book', markets: ids });
    }, 100);
    try {
      await waitFor('three seconds of attack', () => Date.now() - attackFrom >= 3_000, { timeoutMs: 6_000 });
    } finally {
      clearInterval(flood);
    }
    const attackTo = Date.now();
    const duringAttack = slowestPollRate(sim.requests, mine, attackFrom, attackTo);

    // One stream per market: the variants cost ten targets, not 960.
    expect(relay.poller.bookMarketCount).toBeLessThanOrEqual(mine.length + theirs.length + 20);
    const lookups = sim.requests.filter(
      (request) => request.path === '/clob/orderbook' && randomIds.has(request.query.market_id ?? ''),
    ).length;
    // A burst of 10 lookups plus 2 a second, relay-wide (defaults of --unknown-lookups-per-second).
    const seconds = (attackTo - attackFrom) / 1000;
    expect(lookups).toBeLessThanOrEqual(10 + Math.ceil(2 * (seconds + 1)));
    // Every random id is answered unknown_market, however far behind the replies run on a busy machine.
    await waitFor('an unknown_market error for every random id', () =>
      attacker.of('error').filter((e) => e.code === 'unknown_market').length >= randomIds.size
        ? true
        : undefined,
    );
    expect(randomIds.size).toBeGreaterThan(500);

    await attacker.close();
    await waitFor('the attacker’s targets dropped', () => relay.poller.bookMarketCount === mine.length);
    const droppedAt = Date.now();
    const afterFrom = droppedAt;
    await waitFor('two seconds after the attack', () => Date.now() - afterFrom >= 2_000, {
      timeoutMs: 5_000,
    });
    const afterAttack = slowestPollRate(sim.requests, mine, afterFrom, Date.now());
    // Abandoned targets: at most a request already in flight when they were dropped.
    const abandoned = new Set(theirs);
    const askedAfterDrop = sim.requests.filter(
      (request) =>
        request.path === '/clob/orderbook' &&
        request.at > droppedAt + BOOK_POLL_MS &&
        abandoned.has(request.query.market_id ?? ''),
    );
    expect(askedAfterDrop).toEqual([]);

    // The well-behaved client: live throughout, and its books still polled at a good part of their
    // baseline rate while ten more books compete for a budget that holds only part of them (100
    // requests a second for 13 books polled every 100 ms). The gaps a client sees are measured by
    // `npm run soak -- --attacks`; here, what the budget gave.
    expect(good.of('status').filter((status) => status.state === 'stale')).toEqual([]);
    expect(good.violations).toEqual([]);
    const rates = `polls a second of the slowest of mine: baseline ${baseline.toFixed(1)}, during ${duringAttack.toFixed(1)}, after ${afterAttack.toFixed(1)}`;
    expect(duringAttack, rates).toBeGreaterThanOrEqual(0.4 * baseline);
    expect(afterAttack, rates).toBeGreaterThanOrEqual(0.4 * baseline);
  });
});
