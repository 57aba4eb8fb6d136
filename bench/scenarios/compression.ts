/**
 * @module bench/scenarios/compression
 * Scenario 7, bytes on the wire: the same N clients on the depth-10 or the full books of ten busy
 * markets, in four forms, each against its own relay in the same run: JSON and the compact
 * encoding (the `market-relay.compact.1` subprotocol, docs/protocol.md "Compact encoding"), each
 * without and with permessage-deflate offered (as browsers do). Reports the bytes each client's
 * socket read per minute and the relay's CPU per delivery, and every encoding over plain JSON: the
 * relay encodes and compresses each message once for every client of that form, so neither should
 * cost much per delivery however many clients share a message (issue 15: 3x fewer bytes at no more
 * than 1.2x CPU per delivery).
 */
import { measureBroadcast } from '../lib/broadcast-run.ts';
import type { BenchOptions } from '../lib/options.ts';
import { progress } from '../lib/progress.ts';
import type { Simulator } from '../lib/servers.ts';
import { FANOUT_MARKETS, POLL_MS } from './fanout.ts';

export type Encoding = 'json' | 'compact';

export interface CompressionRun {
  stream: string;
  encoding: Encoding;
  deflate: boolean;
  connected: number;
  /** Clients whose relay selected the compact subprotocol they offered (compact rows). */
  negotiated: number;
  bytesPerClientPerMin: number;
  meanUpdateBytes: number;
  cpuPerDeliveryUs: number;
  deliveriesPerSec: number;
  /** One client's frames decoded and checked (seq, book checksum) during the run; failures must be 0. */
  sampled: number;
  /** Of the sampled, stream messages that came as compact arrays (all of them on a compact row). */
  sampledCompact: number;
  sampleFailures: number;
  /** The SDK subscriber riding along in this encoding: updates verified, resyncs (must be 0). */
  sdkUpdates: number;
  sdkResyncs: number;
}

export interface CompressionRatio {
  stream: string;
  /** The encoding and deflate of the row compared with plain JSON, e.g. `compact + deflate`. */
  form: string;
  /** Its bytes per client over plain JSON's (the mean of the run's two plain JSON rows). */
  bytes: number;
  /** Its CPU per delivery over plain JSON's (the same mean). */
  cpu: number;
}

export interface CompressionResult {
  clients: number;
  runs: CompressionRun[];
  ratios: CompressionRatio[];
}

const streams = [
  { stream: 'book, depth 10', depth: 10 },
  { stream: 'book, full depth', depth: null },
] as const;

/**
 * Plain JSON first and again last, every other form compared with the mean of the two: rows run one
 * after the other on a shared machine can drift in CPU per delivery within a run, and a baseline at
 * both ends shows the drift (the two JSON rows) and cancels a steady one; the target's row
 * (compact + deflate) sits in the middle, where the mean stands.
 */
const forms: readonly { encoding: Encoding; deflate: boolean }[] = [
  { encoding: 'json', deflate: false },
  { encoding: 'compact', deflate: false },
  { encoding: 'compact', deflate: true },
  { encoding: 'json', deflate: true },
  { encoding: 'json', deflate: false },
];

export function formName(run: { encoding: Encoding; deflate: boolean }): string {
  return `${run.encoding === 'json' ? 'JSON' : 'compact'}${run.deflate ? ' + deflate' : ''}`;
}

export async function runCompression(options: BenchOptions, sim: Simulator): Promise<CompressionResult> {
  const markets = sim.markets.slice(0, FANOUT_MARKETS);
  const clients = options.compressionClients;
  const runs: CompressionRun[] = [];
  const ratios: CompressionRatio[] = [];
  for (const { stream, depth } of streams) {
    const ofStream: CompressionRun[] = [];
    for (const { encoding, deflate } of forms) {
      const name = formName({ encoding, deflate });
      progress(`compression: ${clients} clients, ${stream}, ${name}`);
      const compact = encoding === 'compact';
      const run = await measureBroadcast({
        kind: 'relay',
        clients: [
          {
            label: 'clients',
            count: clients,
            channel: 'book',
            depth,
            assign: 'one-each',
            markets,
            deflate,
            compact,
          },
        ],
        server: {
          upstream: sim.url,
          pollMs: POLL_MS,
          cpuProf: options.cpuProf,
          profileName: `relay-${encoding}-deflate-${deflate}-depth-${depth ?? 'full'}`,
        },
        warmupMs: options.warmupMs,
        windowMs: options.windowMs,
        sdkCheck: { markets, depth, encoding, deflate },
      });
      const counts = run.groups.clients;
      const measured: CompressionRun = {
        stream,
        encoding,
        deflate,
        connected: run.connected,
        negotiated: counts?.negotiated ?? 0,
        bytesPerClientPerMin: (run.socketBytes / run.connected / run.windowS) * 60,
        meanUpdateBytes: counts === undefined ? 0 : counts.updateBytes / Math.max(1, counts.updates),
        cpuPerDeliveryUs: run.cpuPerDeliveryUs,
        deliveriesPerSec: run.deliveriesPerSec,
        sampled: counts?.sampled ?? 0,
        sampledCompact: counts?.sampledCompact ?? 0,
        sampleFailures: counts?.sampleFailures ?? 0,
        sdkUpdates: run.sdk?.updates ?? 0,
        sdkResyncs: run.sdk?.resyncs ?? 0,
      };
      runs.push(measured);
      ofStream.push(measured);
    }
    const json = ofStream.filter((run) => run.encoding === 'json' && !run.deflate);
    const baseline = (field: 'bytesPerClientPerMin' | 'cpuPerDeliveryUs'): number =>
      json.reduce((sum, run) => sum + run[field], 0) / json.length;
    for (const other of ofStream) {
      if (json.includes(other)) continue;
      ratios.push({
        stream,
        form: formName(other),
        bytes: other.bytesPerClientPerMin / baseline('bytesPerClientPerMin'),
        cpu: other.cpuPerDeliveryUs / baseline('cpuPerDeliveryUs'),
      });
    }
  }
  return { clients, runs, ratios };
}
