/**
 * @module bench/lib/soak/stream-attacks
 * The attacks of `npm run soak -- --attacks` (bench/attack-soak.ts): clients of one address that
 * try to spend the upstream budget and the relay's CPU with streams of the costly kinds (`rest`
 * paths, `candles`, catalogue filters, wildcards). Each attack is a number of connections and, per
 * connection, the subscribes it sends; connections refused at the edge (HTTP 429: too many at once
 * from one address) try again a second later, as a persistent attacker would. Requests are paced
 * under the relay's request rate (10 a second per connection), so what limits the attack is
 * admission, not the flood guard.
 */
import WebSocket from 'ws';
import { candleIntervals } from '../../../packages/protocol/src/channels/candles/streams.ts';
import { candleSources } from '../../../packages/protocol/src/channels/registry.ts';
import { wsUrl } from './attackers.ts';

/** The attacks by name, as `--attacks name,name` selects them. */
export const streamAttackNames = [
  'search-mirrored',
  'activity-private',
  'activity-shared',
  'candles',
  'rest-one-connection',
  'catalogue-filters',
  'wildcards',
] as const;
export type StreamAttackName = (typeof streamAttackNames)[number];

export interface StreamAttackSpec {
  name: StreamAttackName;
  /** The simulator's markets (UUIDs), which paths and candles streams are built from. */
  markets: string[];
}

export interface StreamAttackReport {
  connections: number;
  /** Connection attempts refused before the upgrade (HTTP status). */
  refusedUpgrades: number;
  requests: number;
  /** Distinct streams that sent the attacker a snapshot. */
  streamsWithData: number;
  /** Errors the attacker got, by code. */
  errors: Record<string, number>;
}

export interface StreamAttack {
  stop(): Promise<StreamAttackReport>;
}

interface Subscribe {
  channel: string;
  ids: string[];
}

/**
 * Ids per subscribe: small enough that a request within the per-connection bounds is not refused
 * whole for the part over them (an attacker takes all it may).
 */
const perRequest: Readonly<Record<string, number>> = { rest: 50, candles: 25, markets: 5 };
const REQUEST_GAP_MS = 100;
/** One connection's endless requests: this many new paths every this many ms. */
const ENDLESS_IDS = 10;
const ENDLESS_GAP_MS = 200;

/** The n-th distinct `/api/markets/:id/activity` page (market, then limit, then offset). */
function activityPath(markets: readonly string[], n: number): string {
  const market = markets[n % markets.length]!;
  const rest = Math.floor(n / markets.length);
  // limit 20 is upstream's default (left out of the spelling): 21..100 keeps each n its own path.
  return `/api/markets/${market}/activity?limit=${21 + (rest % 80)}&offset=${Math.floor(rest / 80)}`;
}

function chunks(channel: string, ids: readonly string[]): Subscribe[] {
  const out: Subscribe[] = [];
  const size = perRequest[channel] ?? 100;
  for (let i = 0; i < ids.length; i += size) out.push({ channel, ids: ids.slice(i, i + size) });
  return out;
}

const range = (length: number, from = 0) => Array.from({ length }, (_, i) => from + i);

/** Per connection, the subscribes it sends; `endless`: one more request of new paths every 200 ms. */
function planOf(spec: StreamAttackSpec): { plans: Subscribe[][]; endless?: (n: number) => Subscribe } {
  const { markets } = spec;
  const salt = Date.now().toString(36);
  switch (spec.name) {
    case 'search-mirrored': {
      // 500 distinct searches, each held by both connections: none is private to one of them.
      const paths = range(500).map((i) => `/api/search?q=${salt}-${i}`);
      return { plans: [chunks('rest', paths), chunks('rest', paths)] };
    }
    case 'activity-private':
      return {
        plans: range(100).map((c) =>
          chunks(
            'rest',
            range(200, c * 200).map((n) => activityPath(markets, n)),
          ),
        ),
      };
    case 'activity-shared': {
      // 25,000 paths, each held by two neighbouring connections.
      const pool = 25_000;
      return {
        plans: range(100).map((c) =>
          chunks(
            'rest',
            range(500).map((k) => activityPath(markets, (c * 250 + k) % pool)),
          ),
        ),
      };
    }
    case 'candles': {
      const all = markets.flatMap((market) =>
        candleIntervals.flatMap((interval) =>
          candleSources.map((source) => `${market}:${interval}:${source}`),
        ),
      );
      return {
        plans: range(16).map((c) =>
          chunks(
            'candles',
            range(100).map((k) => all[(c * 100 + k) % all.length]!),
          ),
        ),
      };
    }
    case 'rest-one-connection':
      return {
        plans: [[]],
        endless: (n) => ({
          channel: 'rest',
          ids: range(ENDLESS_IDS, n * ENDLESS_IDS).map((i) => `/api/search?q=${salt}-${i}`),
        }),
      };
    case 'catalogue-filters': {
      const statuses = ['all', 'active', 'expired', 'resolved'];
      const filters = (from: number) =>
        range(60, from).map((i) => `${statuses[i % 4]}:${Math.floor(i / 4) + 1}`);
      return { plans: [chunks('markets', filters(0)), chunks('markets', filters(60))] };
    }
    case 'wildcards':
      return {
        plans: range(100).map(() => [
          { channel: 'trades', ids: ['*'] },
          { channel: 'market', ids: ['*'] },
          { channel: 'price', ids: ['*'] },
        ]),
      };
  }
}

export function streamAttack(url: string, spec: StreamAttackSpec): StreamAttack {
  const report: StreamAttackReport = {
    connections: 0,
    refusedUpgrades: 0,
    requests: 0,
    streamsWithData: 0,
    errors: {},
  };
  const withData = new Set<string>();
  const sockets = new Set<WebSocket>();
  const timers = new Set<NodeJS.Timeout>();
  let running = true;
  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (running) run();
    }, ms);
    timers.add(timer);
  };
  const { plans, endless } = planOf(spec);
  let endlessCount = 0;

  const open = (plan: Subscribe[]) => {
    const ws = new WebSocket(wsUrl(url));
    ws.on('error', () => {});
    ws.on('unexpected-response', (request) => {
      report.refusedUpgrades += 1;
      request.destroy();
      later(1_000, () => open(plan));
    });
    ws.on('message', (data) => {
      const message = JSON.parse(data.toString()) as Record<string, unknown>;
      if (message.type === 'snapshot') withData.add(`${message.channel}:${message.market ?? message.path}`);
      if (message.type === 'error') {
        const code = String(message.code);
        report.errors[code] = (report.errors[code] ?? 0) + 1;
      }
    });
    ws.on('open', () => {
      report.connections += 1;
      sockets.add(ws);
      const send = (request: Subscribe) => {
        if (ws.readyState !== WebSocket.OPEN) return;
        report.requests += 1;
        const field = request.channel === 'rest' ? 'paths' : 'markets';
        ws.send(JSON.stringify({ op: 'subscribe', channel: request.channel, [field]: request.ids }));
      };
      for (const [i, request] of plan.entries()) later(i * REQUEST_GAP_MS, () => send(request));
      if (endless !== undefined) {
        const more = () => {
          send(endless(endlessCount++));
          later(ENDLESS_GAP_MS, more);
        };
        more();
      }
    });
    ws.on('close', () => sockets.delete(ws));
  };
  for (const plan of plans) open(plan);
  return {
    async stop() {
      running = false;
      for (const timer of timers) clearTimeout(timer);
      for (const ws of sockets) ws.terminate();
      report.streamsWithData = withData.size;
      return report;
    },
  };
}
