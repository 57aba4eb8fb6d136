/**
 * @module bench/history-outage
 * `node --import tsx bench/history-outage.ts [--outage-s=30]`: the shared history's engine stopped
 * under three relays (docs/cluster.md "One history for the cluster"). One private Redis, one private
 * PostgreSQL (test/support/postgres-server.ts), the simulator, three relay processes recording into
 * the one PostgreSQL; on each relay one client of 3 full books. PostgreSQL is stopped for the outage
 * and started again with its data. It prints what each relay's /health said during the outage, the
 * updates each client received during it (live serving going on), how long after the engine's return
 * every relay wrote again, each relay's history metrics during the outage and after, and per book
 * the record as relay 1 exports it: rows, rows twice (none expected), and the gaps of seq (one
 * expected per book: the outage's); then the book replayed from relay 2: its `replay_gap`s, and the
 * updates clients got live that it neither sent nor covered by a gap (none expected: never a
 * silent hole).
 */
import { startSimulator } from '../src/sim/server.ts';
import { type ChildRelay, startChildRelay } from '../test/support/cluster/child-relay.ts';
import {
  liveBook,
  metric,
  type Received,
  recorded,
  replayBook,
  runs,
  silentlyMissing,
} from '../test/support/cluster/history-reads.ts';
import { startRedis } from '../test/support/cluster/redis-server.ts';
import { startPostgres } from '../test/support/postgres-server.ts';
import { waitFor } from '../test/support/wait-for.ts';

const outageArg = process.argv.find((arg) => arg.startsWith('--outage-s='));
const outageMs = Number(outageArg?.split('=')[1] ?? 30) * 1_000;
const RELAYS = 3;

interface HistoryHealth {
  reachable: boolean;
  writing: boolean;
  writeFailures: number;
  dropped: number;
}

const health = async (relay: ChildRelay) =>
  ((await (await fetch(`${relay.url}/health`)).json()) as { history: HistoryHealth }).history;

/** The history metrics that say whether a relay records: `market_relay_history_…`. */
const historyMetrics = async (relay: ChildRelay) => ({
  storeUp: await metric(relay, 'history_store_up'),
  writeFailing: await metric(relay, 'history_write_failing'),
  dropped: await metric(relay, 'history_messages_dropped_total'),
});

const start = Date.now();
const [sim, redis, postgres] = await Promise.all([
  startSimulator({ markets: 3, seed: 48, tickMs: 100 }),
  startRedis(),
  startPostgres(),
]);
const markets = sim.market.activeMarketIds().slice(0, 3);
const relays: ChildRelay[] = [];
const sockets: { close(): void }[] = [];
try {
  relays.push(
    ...(await Promise.all(
      Array.from({ length: RELAYS }, () =>
        startChildRelay([
          `--upstream=${sim.url}`,
          `--redis=${redis.url}`,
          `--history=${postgres.url}`,
          '--book-poll-ms=250',
          '--upstream-rps=100',
        ]),
      ),
    )),
  );
  const viewers = await Promise.all(
    relays.flatMap((relay) =>
      markets.map(async (market) => ({ relay, market, ...(await liveBook(relay, market)) })),
    ),
  );
  sockets.push(...viewers);
  await waitFor('every book recorded', async () =>
    (await Promise.all(markets.map((market) => recorded(relays[0]!, market, start)))).every(
      (rows) => rows.length >= 5,
    ),
  );
  const before = viewers.map((viewer) => viewer.received.length);
  await postgres.stop();
  const stoppedAt = Date.now();
  const said = await waitFor(
    'every relay to say the store is away',
    async () => {
      const states = await Promise.all(relays.map(health));
      return states.every((state) => !state.reachable || !state.writing) && states;
    },
    { timeoutMs: outageMs + 30_000 },
  );
  const saidAfterMs = Date.now() - stoppedAt;
  const metricsDuringOutage = await Promise.all(relays.map(historyMetrics));
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, outageMs - (Date.now() - stoppedAt))));
  const during = viewers.map((viewer, i) => viewer.received.length - before[i]!);
  await postgres.start();
  const backAt = Date.now();
  await waitFor(
    'every relay writing again',
    async () => (await Promise.all(relays.map(health))).every((state) => state.reachable && state.writing),
    { timeoutMs: 60_000, everyMs: 100 },
  );
  const writingAfterMs = Date.now() - backAt;
  const lastSeen = new Map(markets.map((market) => [market, 0]));
  for (const viewer of viewers)
    lastSeen.set(viewer.market, Math.max(lastSeen.get(viewer.market)!, viewer.received.at(-1)?.seq ?? 0));
  const books = await Promise.all(
    markets.map(async (market) => {
      const rows = await waitFor('the record to reach the last update seen', async () => {
        const read = await recorded(relays[0]!, market, start);
        return read.some((row) => row.seq >= lastSeen.get(market)!) && read;
      });
      const keys = rows.map((row) => `${row.epoch}/${row.seq}`);
      const epochs = [...new Set(rows.map((row) => row.epoch))];
      // Every update of the book any client got live, replayed from relay 2 over the whole record.
      const live = new Map<string, Received>();
      for (const viewer of viewers)
        if (viewer.market === market)
          for (const got of viewer.received) live.set(`${got.epoch}/${got.seq}`, got);
      const firstRts = (JSON.parse(rows[0]!.text) as { rts: string }).rts;
      const replay = await replayBook(relays[1]!, market, firstRts, new Date().toISOString());
      const replayed = replay.messages.map((message) => `${message.epoch}/${message.seq}`);
      return {
        market,
        rows: rows.length,
        twice: keys.length - new Set(keys).size,
        gaps: epochs.map((epoch) => runs(rows.filter((row) => row.epoch === epoch)).length - 1),
        replay: {
          messages: replay.messages.length,
          twice: replayed.length - new Set(replayed).size,
          replayGaps: replay.gaps,
          liveNotReplayed: [...live.keys()].filter((key) => !replayed.includes(key)).length,
          liveMissingWithoutGap: silentlyMissing([...live.values()], replay).length,
        },
      };
    }),
  );
  const after = await Promise.all(relays.map(health));
  console.log(
    JSON.stringify(
      {
        outageMs,
        healthSaidAwayAfterMs: saidAfterMs,
        healthDuringOutage: said.map(({ reachable, writing }) => ({ reachable, writing })),
        metricsDuringOutage,
        updatesReceivedDuringOutage: during,
        writingAgainAfterMs: writingAfterMs,
        relays: after.map(({ writeFailures, dropped }) => ({ writeFailures, dropped })),
        metricsAfter: await Promise.all(relays.map(historyMetrics)),
        books,
      },
      null,
      2,
    ),
  );
} finally {
  for (const socket of sockets) socket.close();
  await Promise.all(relays.map((relay) => relay.stop('SIGKILL')));
  await Promise.all([sim.close(), redis.stop(), postgres.remove()]);
}
