/**
 * The `rest` channel (protocol.md "`rest` data"), checked by a client written from the docs alone:
 * a plain WebSocket, a stock JSON Patch library (fast-json-patch) and Node's CRC-32 over JSON with
 * sorted members. It rebuilds user positions, activity, holders, comments and the leaderboard
 * exactly as the simulator serves them after each of its ticks (it moves only when ticked, so a
 * body fetched after a tick is the one the relay's next poll sees), with upstream's field types;
 * equivalent spellings share one stream and one poll; a private path never reaches upstream.
 */
import { crc32 } from 'node:zlib';
import jsonPatch, { type Operation } from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type Harness, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Message = { type: string; [field: string]: Json };

/** JSON with members sorted and no whitespace (RFC 8785 for these bodies), as protocol.md defines. */
function canonical(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key]!)}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/** A client of the docs: one state per path, every patch applied in seq order and checked. */
class DocsClient {
  readonly states = new Map<string, { seq: number; body: Json; updates: number }>();
  readonly messages: Message[] = [];
  readonly problems: string[] = [];
  readonly #ws: WebSocket;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on('message', (data) => this.#receive(JSON.parse(String(data)) as Message));
  }

  static async connect(url: string): Promise<DocsClient> {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/ws`);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    return new DocsClient(ws);
  }

  send(frame: object): void {
    this.#ws.send(JSON.stringify(frame));
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#ws.once('close', () => resolve());
      this.#ws.close();
    });
  }

  #receive(message: Message): void {
    this.messages.push(message);
    if (message.type !== 'snapshot' && message.type !== 'update') return;
    const path = message.path as string;
    const seq = message.seq as number;
    let body: Json;
    if (message.type === 'snapshot') {
      body = message.data as Json;
      this.states.set(path, { seq, body, updates: 0 });
    } else {
      const state = this.states.get(path);
      if (state === undefined || seq !== state.seq + 1) {
        this.problems.push(`${path}: update ${seq} after ${state?.seq}`);
        return;
      }
      const patch = message.data as unknown as Operation[];
      body = jsonPatch.applyPatch(structuredClone(state.body), patch, true, false).newDocument as Json;
      this.states.set(path, { seq, body, updates: state.updates + 1 });
    }
    if (crc32(canonical(body)) !== message.checksum) this.problems.push(`${path}: checksum at seq ${seq}`);
  }
}

async function served(harness: Harness, path: string): Promise<Json> {
  return (await (await fetch(`${harness.sim.url}${path}`)).json()) as Json;
}

describe('rest channel', () => {
  const { opened, start } = useHarness();

  it('rebuilds positions, activity, holders, comments and the leaderboard exactly as upstream serves them', async () => {
    const harness = await start({ sim: { markets: 4 } });
    const [market] = harness.sim.market.activeMarketIds();
    const holders = `/api/markets/${market}/holders?type=YES`;
    const { holders: list } = (await served(harness, holders)) as { holders: Array<{ username: string }> };
    const user = list[0]!.username;
    const paths = [
      `/api/users/${user}/positions?include_closed=true`,
      `/api/users/${user}/activity`,
      holders,
      `/api/markets/${market}/comments`,
      '/api/rewards/leaderboard',
    ];
    const client = await DocsClient.connect(harness.relay.url);
    opened.push(client);
    client.send({ op: 'subscribe', id: 1, channel: 'rest', paths });
    await waitFor('subscribed', () => client.messages.find((m) => m.type === 'subscribed'));
    expect(client.messages.find((m) => m.type === 'subscribed')).toMatchObject({ channel: 'rest', paths });

    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 5; i++) harness.sim.tick();
      const bodies = await Promise.all(paths.map((path) => served(harness, path)));
      await waitFor(`round ${round}: every body as served`, () =>
        paths.every((path, i) => JSON.stringify(client.states.get(path)?.body) === JSON.stringify(bodies[i]))
          ? true
          : undefined,
      );
      for (const [i, path] of paths.entries()) expect(client.states.get(path)?.body).toEqual(bodies[i]);
    }
    expect(client.problems).toEqual([]);
    // The bodies moved and arrived as patches, not as new snapshots.
    const updates = [...client.states.values()].reduce((sum, state) => sum + state.updates, 0);
    expect(updates).toBeGreaterThan(0);
    expect(client.messages.filter((m) => m.type === 'snapshot')).toHaveLength(paths.length);
    // Upstream's types: decimal strings stay strings, numbers numbers.
    const positions = client.states.get(paths[0]!)?.body as { positions: Array<Record<string, Json>> };
    for (const position of positions.positions) expect(typeof position.quantity).toBe('string');
    const holderBody = client.states.get(holders)?.body as { holders: Array<Record<string, Json>> };
    expect(typeof holderBody.holders[0]?.quantity).toBe('number');
  });

  it('shares one stream and one poll between spellings; refuses a private path without asking upstream', async () => {
    const harness = await start({ sim: { markets: 2 } });
    const [market] = harness.sim.market.activeMarketIds();
    const canonicalPath = `/api/markets/${market}/holders?type=YES`;
    const a = await DocsClient.connect(harness.relay.url);
    const b = await DocsClient.connect(harness.relay.url);
    opened.push(a, b);
    a.send({ op: 'subscribe', id: 1, channel: 'rest', paths: [canonicalPath] });
    b.send({
      op: 'subscribe',
      id: 2,
      channel: 'rest',
      paths: [`/api/markets/${market!.toUpperCase()}/holders?offset=0&type=yes&limit=20`],
    });
    await waitFor('both snapshots', () =>
      a.states.has(canonicalPath) && b.states.has(canonicalPath) ? true : undefined,
    );
    expect(b.messages.find((m) => m.type === 'subscribed')).toMatchObject({ paths: [canonicalPath] });
    expect(harness.relay.registry.ids('rest').size).toBe(1);
    harness.sim.clearRequests();
    await waitFor('a few polls', () =>
      harness.sim.requests.filter((r) => r.path.endsWith('/holders')).length >= 5 ? true : undefined,
    );
    const polls = harness.sim.requests.filter((r) => r.path.endsWith('/holders'));
    // One spelling reaches upstream, asked by one target: never two requests in flight at once.
    expect(new Set(polls.map((r) => `${r.path}?${new URLSearchParams(r.query)}`))).toEqual(
      new Set([`/api/markets/${market}/holders?type=YES`]),
    );

    harness.sim.clearRequests();
    for (const [id, path] of [
      '/api/user/positions',
      '/auth/nonce',
      '/api/developer/orders',
      '/api/nope',
    ].entries())
      a.send({ op: 'subscribe', id: 10 + id, channel: 'rest', paths: [path] });
    await waitFor('four refusals', () => {
      const refusals = a.messages.filter((m) => m.type === 'error' && Number(m.id) >= 10);
      return refusals.length === 4 ? refusals : undefined;
    });
    for (const refusal of a.messages.filter((m) => m.type === 'error'))
      expect(refusal).toMatchObject({ code: 'path_not_public' });
    // Server-Sent Events take the same paths, one `paths` parameter each, and refuse the same way.
    const sse = await fetch(
      `${harness.relay.url}/v1/sse?channel=rest&paths=${encodeURIComponent('/auth/nonce')}`,
    );
    expect(sse.status).toBe(400);
    expect(await sse.json()).toMatchObject({ error: 'path_not_public' });
    a.send({ op: 'ping', id: 99 });
    await waitFor('pong', () => a.messages.find((m) => m.type === 'pong'));
    expect(harness.sim.requests.filter((r) => !r.path.endsWith('/holders'))).toEqual([]);
  });
});
