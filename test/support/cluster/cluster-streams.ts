/**
 * @module test/support/cluster/cluster-streams
 * The fixture of the cluster-wide stream tests (test/cluster/streams/): a private Redis, the
 * simulator with 4 busy markets, and relay processes (`market-relay serve`, so they can be stopped
 * with SIGTERM or killed) on both, with short intervals and leases (options), started per test and
 * killed after it; clients that subscribe, move between relays with `resume`, and wait for progress.
 */
import { beforeAll } from 'vitest';
import { type Message, ProtocolClient } from '../clients/protocol-client.ts';
import { waitFor } from '../wait-for.ts';
import type { ChildRelay } from './child-relay.ts';
import { useRelayProcesses } from './relay-processes.ts';

export interface Selection {
  channel: 'book' | 'price';
  markets: string[];
  depth?: 10 | null;
}

/** The simulator and a private Redis for the file's tests; each test's relays and clients go after it. */
export function useClusterStreams() {
  const processes = useRelayProcesses({
    sim: { markets: 4, seed: 11, tickMs: 40 },
    relayArgs: ['--linger-ms=2000'],
  });
  const { redis, clients, relay, inProcessRelay } = processes;
  let markets: string[];
  // After the simulator has started: its beforeAll was registered first.
  beforeAll(() => {
    markets = processes.sim.market.marketIds();
  });

  /** Every stream of the selections a client holds: full books, a depth-10 book, prices. */
  const selections = (watched: string[]): Selection[] => [
    { channel: 'book', markets: watched, depth: null },
    { channel: 'book', markets: [watched[0]!], depth: 10 },
    { channel: 'price', markets: watched },
  ];

  function viewsOf(client: ProtocolClient, watched: Selection[]) {
    return watched.flatMap((selection) =>
      selection.markets.map((market) => client.view(selection.channel, market, selection.depth)),
    );
  }

  async function subscribe(
    at: ChildRelay,
    watched: Selection[],
    protocols: string[] = [],
  ): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(at.url, {}, protocols);
    clients.push(client);
    for (const selection of watched) await client.request({ op: 'subscribe', ...selection });
    await waitFor('first snapshots', () => viewsOf(client, watched).every((view) => view !== undefined));
    return client;
  }

  /**
   * The client leaves and resumes every stream on `to` from where it stood. Returns the new client
   * (its views carried over, so any gap is a violation) and the `subscribed` answers.
   */
  async function move(
    from: ProtocolClient,
    to: { url: string },
    watched: Selection[],
    protocols: string[] = [],
  ): Promise<{ client: ProtocolClient; answers: Message[] }> {
    const client = await ProtocolClient.connect(to.url, {}, protocols);
    clients.push(client);
    for (const [key, view] of from.streams) client.streams.set(key, { ...view, updates: 0 });
    const answers: Message[] = [];
    for (const selection of watched) {
      const resume = Object.fromEntries(
        selection.markets.map((market) => {
          // The copy: `from` may still be receiving (its relay was not stopped).
          const view = client.view(selection.channel, market, selection.depth)!;
          return [market, { epoch: view.epoch, seq: view.seq }];
        }),
      );
      answers.push(await client.request({ op: 'subscribe', ...selection, resume }));
    }
    return { client, answers };
  }

  const allRecovered = (answers: Message[]) =>
    answers.flatMap((answer) => Object.values(answer.recovered as Record<string, boolean>));

  /** Waits until every full book of `watched` has moved `by` updates past what `client` has now. */
  async function progress(client: ProtocolClient, watched: Selection[], by = 3): Promise<void> {
    const books = watched[0]!;
    const from = books.markets.map((market) => client.view('book', market, null)!.seq);
    await waitFor(`${by} more updates`, () =>
      books.markets.every((market, i) => client.view('book', market, null)!.seq >= from[i]! + by),
    );
  }

  return {
    redis,
    /** The simulator's markets, all of them busy. */
    get markets() {
      return markets;
    },
    /** Every client the file's current test opened. */
    clients,
    relay,
    inProcessRelay,
    selections,
    subscribe,
    move,
    allRecovered,
    progress,
  };
}
