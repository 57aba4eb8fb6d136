/**
 * @module bench/scenarios/compression
 * Scenario 7, permessage-deflate: the same N clients on the depth-10 or the full books of ten busy
 * markets, once without and once with deflate offered (as browsers do), in the same run. Reports
 * the bytes each client's socket read per minute and the relay's CPU per delivery: the relay
 * compresses each message once for every compressing client (docs/protocol.md "Compression"), so
 * compression should cost little per delivery however many clients share a message.
 */
import { measureBroadcast, type RunMetrics } from '../lib/broadcast-run.ts';
import type { BenchOptions } from '../lib/options.ts';
import { progress } from '../lib/progress.ts';
import type { Simulator } from '../lib/servers.ts';
import { FANOUT_MARKETS, POLL_MS } from './fanout.ts';

export interface CompressionRun {
  stream: string;
  deflate: boolean;
  connected: number;
  bytesPerClientPerMin: number;
  cpuPerDeliveryUs: number;
  deliveriesPerSec: number;
}

export interface CompressionResult {
  clients: number;
  runs: CompressionRun[];
  /** Per stream: plain bytes over compressed bytes, and compressed CPU per delivery over plain. */
  ratios: { stream: string; byteSaving: number; cpuRatio: number }[];
}

const streams = [
  { stream: 'book, depth 10', depth: 10 },
  { stream: 'book, full depth', depth: null },
] as const;

export async function runCompression(options: BenchOptions, sim: Simulator): Promise<CompressionResult> {
  const markets = sim.markets.slice(0, FANOUT_MARKETS);
  const clients = options.compressionClients;
  const runs: CompressionRun[] = [];
  const ratios: CompressionResult['ratios'] = [];
  for (const { stream, depth } of streams) {
    const pair: RunMetrics[] = [];
    for (const deflate of [false, true]) {
      progress(`compression: ${clients} clients, ${stream}, deflate ${deflate ? 'on' : 'off'}`);
      const run = await measureBroadcast({
        kind: 'relay',
        clients: [
          { label: 'clients', count: clients, channel: 'book', depth, assign: 'one-each', markets, deflate },
        ],
        server: {
          upstream: sim.url,
          pollMs: POLL_MS,
          cpuProf: options.cpuProf,
          profileName: `relay-deflate-${deflate}`,
        },
        warmupMs: options.warmupMs,
        windowMs: options.windowMs,
      });
      pair.push(run);
      runs.push({
        stream,
        deflate,
        connected: run.connected,
        bytesPerClientPerMin: (run.socketBytes / run.connected / run.windowS) * 60,
        cpuPerDeliveryUs: run.cpuPerDeliveryUs,
        deliveriesPerSec: run.deliveriesPerSec,
      });
    }
    const [plain, compressed] = runs.slice(-2) as [CompressionRun, CompressionRun];
    ratios.push({
      stream,
      byteSaving: plain.bytesPerClientPerMin / compressed.bytesPerClientPerMin,
      cpuRatio: compressed.cpuPerDeliveryUs / plain.cpuPerDeliveryUs,
    });
  }
  return { clients, runs, ratios };
}
