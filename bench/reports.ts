/**
 * @module bench/reports
 * What `npm run bench` prints for each scenario: its Markdown section and the targets it measures,
 * made from the scenario's result alone (poll capacity's and rest's live beside their scenarios).
 */

import {
  fixed,
  markdownTable,
  pacingLine,
  type Report,
  runHeaders,
  runRow,
  sdkLine,
  type Target,
  target,
  writesLine,
} from './lib/report.ts';
import type { BytesResult } from './scenarios/bytes.ts';
import type { ClusterResult } from './scenarios/cluster.ts';
import type { ClusterSpreadResult } from './scenarios/cluster-spread.ts';
import { type CompressionResult, formName } from './scenarios/compression.ts';
import type { DiffRun } from './scenarios/diff.ts';
import type { FanoutResult, PollingCost } from './scenarios/fanout.ts';
import type { MultiShapeResult, ShapeTarget } from './scenarios/fanout-multi.ts';
import type { FreshnessResult } from './scenarios/freshness.ts';
import type { MarketsResult } from './scenarios/markets.ts';
import type { MemoryResult } from './scenarios/memory.ts';
import type { UpstreamResult } from './scenarios/upstream.ts';

export function diffReport(runs: DiffRun[]): Report {
  const targets: Target[] = [];
  const section =
    '### 5. Diff: aggregate + diff + checksum of one book (in-process, median µs)\n\n' +
    markdownTable(
      [
        'levels/side',
        'orders/side',
        'aggregate',
        'diff',
        'checksum',
        'total',
        'total p99',
        'serialise update',
      ],
      runs.map((run) => [
        run.levelsPerSide,
        run.ordersPerSide,
        fixed(run.aggregateUs),
        fixed(run.diffUs),
        fixed(run.checksumUs),
        fixed(run.totalUs),
        fixed(run.totalP99Us),
        fixed(run.serialiseUs),
      ]),
    );
  const thousand = runs.find((run) => run.levelsPerSide === 1_000);
  if (thousand !== undefined)
    targets.push(target('diff + checksum, 1,000-level book (median)', thousand.totalUs / 1000, 1, 'ms'));
  return { section, targets };
}

export function fanoutReport(fanout: { pollingCost: PollingCost; results: FanoutResult[] }): Report {
  const targets: Target[] = [];
  const { pollingCost } = fanout;
  let text =
    '### 1. Fan-out: N clients on the depth-10 books of 10 busy markets\n\n' +
    `Relay fixed polling cost (${pollingCost.clients} clients, ${fixed(pollingCost.pollsPerSec, 0)} polls/s): ` +
    `${fixed(pollingCost.cpuMsPerSec, 1)} ms CPU/s, ${fixed(pollingCost.cpuPerPollMs, 2)} ms per poll.\n`;
  for (const result of fanout.results) {
    text +=
      `\nN = ${result.clients}\n\n` +
      markdownTable(runHeaders, result.runs.map(runRow)) +
      `\n\n${pacingLine(result.runs)}` +
      `relay fan-out only (fixed polling cost taken out): ${fixed(result.relayFanoutOnlyCpuPerDeliveryUs, 2)} µs/delivery\n` +
      anchorsLine(result.ratios, result.uwsMissing) +
      `floor (one prebuilt frame, one socket write per delivery): ${fixed(result.ratios.floorCpuVsWs, 2)} x ws CPU/delivery\n` +
      sdkLine(result.runs[0]?.sdk);
    targets.push(
      target(`fan-out N=${result.clients}: CPU/delivery vs ws`, result.ratios.cpuVsWs, 1),
      target(
        `fan-out N=${result.clients}: fan-out-only CPU/delivery vs ws`,
        result.ratios.fanoutOnlyCpuVsWs,
        1,
      ),
      target(`fan-out N=${result.clients}: CPU/delivery vs socket.io`, result.ratios.cpuVsSocketIo, 0.7),
      target(`fan-out N=${result.clients}: p99 latency vs ws`, result.ratios.p99VsWs, 1.25),
    );
  }
  return { section: text, targets };
}

export function fanoutMultiReport(shapes: MultiShapeResult[]): Report {
  const targets: Target[] = [];
  let text = '### 9. Fan-out, several books per client (depth 10, busy books)\n';
  for (const shape of shapes) {
    text +=
      `\n${shape.name}, poll ${shape.pollMs} ms\n\n` +
      markdownTable(runHeaders, shape.runs.map(runRow)) +
      `\n\n${pacingLine(shape.runs)}${writesLine(shape.runs[0]?.framesPerWrite)}${sdkLine(shape.runs[0]?.sdk)}` +
      anchorsLine(shape.ratios, shape.uwsMissing) +
      `floor (no polling, one prebuilt frame, one socket write per delivery): ${fixed(shape.ratios.floorCpuVsWs, 2)} x ws CPU/delivery, ` +
      `its kernel time alone ${fixed(shape.ratios.floorKernelVsWs, 2)} x\n` +
      `kernel µs/delivery: ${shape.runs.map((run) => `${run.server} ${fixed(run.kernelPerDeliveryUs, 2)}`).join(', ')}\n`;
    for (const goal of shape.targets) {
      const value = shapeRatio(shape.ratios, goal);
      const name = `${shape.name}: ${goal.metric === 'cpu' ? 'CPU/delivery' : 'p99 latency'} vs ${goal.vs}${goal.issue === 16 ? '' : ` (issue ${goal.issue})`}`;
      if (value === undefined)
        text += `not measured: ${name}${shape.uwsMissing ? ` (${shape.uwsMissing})` : ''}\n`;
      else targets.push(target(name, value, goal.limit));
    }
  }
  return { section: text, targets };
}

function shapeRatio(ratios: MultiShapeResult['ratios'], goal: ShapeTarget): number | undefined {
  if (goal.vs === 'uWS') return goal.metric === 'cpu' ? ratios.cpuVsUws : ratios.p99VsUws;
  if (goal.vs === 'socket.io') return goal.metric === 'cpu' ? ratios.cpuVsSocketIo : undefined;
  return goal.metric === 'cpu' ? ratios.cpuVsWs : ratios.p99VsWs;
}

/** The relay against each anchor of the same run, in one line. */
function anchorsLine(
  ratios: { cpuVsWs: number; p99VsWs: number; cpuVsUws?: number; p99VsUws?: number },
  uwsMissing: string | undefined,
): string {
  const uws =
    ratios.cpuVsUws === undefined || ratios.p99VsUws === undefined
      ? `uWS not measured (${uwsMissing})`
      : `${fixed(ratios.cpuVsUws, 2)} x uWS CPU/delivery, p99 ${fixed(ratios.p99VsUws, 2)} x uWS`;
  return `relay: ${fixed(ratios.cpuVsWs, 2)} x ws CPU/delivery, p99 ${fixed(ratios.p99VsWs, 2)} x ws; ${uws}\n`;
}

export function marketsReport(markets: MarketsResult): Report {
  const targets: Target[] = [];
  const short = pacingLine(markets.runs);
  const section =
    `### 2. Many markets: ${markets.clients} clients x ${markets.marketsPerClient} markets (price channel)\n\n` +
    markdownTable(runHeaders, markets.runs.map(runRow)) +
    (short === '' ? '' : `\n\n${short.trimEnd()}`);
  targets.push(
    target('20 markets/client: CPU/delivery vs ws', markets.ratios.cpuVsWs, 0.5),
    target('20 markets/client: p99 latency vs ws', markets.ratios.p99VsWs, 1.25),
  );
  return { section, targets };
}

export function memoryReport(memory: MemoryResult): Report {
  const targets: Target[] = [];
  const section =
    `### 3. Memory: idle subscribed connections\n\n` +
    markdownTable(
      [
        'server',
        'connections',
        'RSS before MB',
        'RSS after MB',
        'RSS KB/conn',
        'heap KB/conn',
        'first frame B',
      ],
      memory.runs.map((run) => [
        run.server,
        run.connected,
        fixed(run.rssBeforeMb),
        fixed(run.rssAfterMb),
        fixed(run.rssPerConnectionKb, 2),
        fixed(run.heapPerConnectionKb, 2),
        fixed(run.firstFrameBytes, 0),
      ]),
    );
  targets.push(target('RSS per idle subscribed connection vs bare ws', memory.ratios.rssVsWs, 1.25));
  return { section, targets };
}

export function upstreamReport(upstream: UpstreamResult): Report {
  const targets: Target[] = [];
  const section =
    `### 4. Upstream load: K clients x M markets (book + price), poll ${upstream.pollMs} ms\n\n` +
    markdownTable(
      ['clients K', 'markets M', 'relay req/s (measured)', 'status quo req/s (computed)', 'reduction'],
      upstream.runs.map((run) => [
        run.clients,
        run.markets,
        fixed(run.relayRequestsPerSec, 1),
        fixed(run.statusQuoRequestsPerSec, 0),
        `${fixed(run.reduction, 0)}x`,
      ]),
    ) +
    `\n\nStatus quo measured with K = ${upstream.statusQuoMeasured.clients}: ` +
    `${fixed(upstream.statusQuoMeasured.requestsPerSec, 1)} req/s (formula: ${fixed(upstream.statusQuoMeasured.computed, 0)}).`;
  targets.push(target('relay upstream req/s, largest K over smallest K', upstream.relaySpread, 1.1));
  return { section, targets };
}

export function bytesReport(bytes: BytesResult): Report {
  const section =
    `### 6. Bytes per client per minute (one stream, poll ${bytes.pollMs} ms, simulator tick ${bytes.simTickMs} ms, ${fixed(bytes.windowS, 0)} s window)\n\n` +
    markdownTable(
      ['stream', 'updates/min', 'update B', 'snapshot B', 'updates KB/min', 'snapshots KB/min', 'saving'],
      bytes.runs.map((run) => [
        run.stream,
        fixed(run.updatesPerMin, 0),
        fixed(run.meanUpdateBytes, 0),
        fixed(run.meanSnapshotBytes, 0),
        fixed(run.updateBytesPerMin / 1024, 1),
        fixed(run.snapshotBytesPerMin / 1024, 1),
        `${fixed(run.saving, 1)}x`,
      ]),
    ) +
    `\n\nStatus quo, polling upstream's order book yourself: ${fixed(bytes.upstreamBookBytes / 1024, 1)} KB per ` +
    `response, ${fixed(bytes.upstreamPollingBytesPerMin / 1024, 0)} KB/min per market.`;
  return { section, targets: [] };
}

export function compressionReport(compression: CompressionResult): Report {
  const targets: Target[] = [];
  const section =
    `### 7. Compression: ${compression.clients} clients, JSON and compact, permessage-deflate off and on (poll 500 ms)\n\n` +
    markdownTable(
      [
        'stream',
        'encoding',
        'connected',
        'deliveries/s',
        'update B',
        'KB/client/min (socket)',
        'CPU/delivery µs',
        'checked: compact (failed)',
        'SDK updates (resyncs)',
      ],
      compression.runs.map((run) => [
        run.stream,
        run.encoding === 'compact' ? `${formName(run)} (${run.negotiated} negotiated)` : formName(run),
        run.connected,
        fixed(run.deliveriesPerSec, 0),
        fixed(run.meanUpdateBytes, 0),
        fixed(run.bytesPerClientPerMin / 1024, 1),
        fixed(run.cpuPerDeliveryUs, 2),
        `${run.sampled}: ${run.sampledCompact} (${run.sampleFailures})`,
        `${run.sdkUpdates} (${run.sdkResyncs})`,
      ]),
    ) +
    '\n\nOver plain JSON (the mean of its two rows), same run:\n\n' +
    markdownTable(
      ['stream', 'encoding', 'bytes', 'CPU/delivery'],
      compression.ratios.map((ratio) => [
        ratio.stream,
        ratio.form,
        `${fixed(ratio.bytes, 2)}x`,
        `${fixed(ratio.cpu, 2)}x`,
      ]),
    );
  // Issue 15: at least 3x fewer bytes at no more than 1.2x CPU per delivery. JSON + deflate is
  // kept as a row of its own to show what deflate alone reaches.
  for (const ratio of compression.ratios) {
    if (ratio.form === 'compact') continue;
    targets.push(target(`bytes, ${ratio.stream}, ${ratio.form} over JSON`, ratio.bytes, 0.33));
    targets.push(target(`CPU/delivery, ${ratio.stream}, ${ratio.form} over JSON`, ratio.cpu, 1.2));
  }
  return { section, targets };
}

export function freshnessReport(freshness: FreshnessResult): Report {
  const targets: Target[] = [];
  const section =
    `### 8. Freshness per request: ${freshness.markets} markets (10 hot, the rest about one change a minute), ${freshness.rps} req/s, max age ${freshness.maxAgeMs / 1000} s, ${fixed(freshness.windowS, 0)} s window\n\n` +
    markdownTable(
      [
        'scheduler',
        'changes',
        'p50 ms',
        'p99 ms',
        'hot p50 ms',
        'quiet p50 ms',
        'unreceived',
        'oldest confirmation s',
        'upstream req/s',
      ],
      freshness.runs.map((run) => [
        run.scheduler,
        run.changes,
        fixed(run.p50Ms, 0),
        fixed(run.p99Ms, 0),
        fixed(run.hotP50Ms, 0),
        fixed(run.quietP50Ms, 0),
        run.unreceived,
        fixed(run.oldestConfirmationMs / 1000, 1),
        fixed(run.upstreamRequestsPerSec, 1),
      ]),
    );
  targets.push(
    target('freshness: change->receipt p50 vs round-robin', freshness.ratios.p50, 0.3),
    target('freshness: change->receipt p99 vs round-robin', freshness.ratios.p99, 0.5),
    ...freshness.runs.map((run) =>
      target(
        `freshness (${run.scheduler}): oldest confirmation vs max age`,
        run.oldestConfirmationMs / freshness.maxAgeMs,
        1,
      ),
    ),
  );
  return { section, targets };
}

export function clusterReport(cluster: ClusterResult): Report {
  const targets: Target[] = [];
  const section =
    `### 10. Cluster: rolling restart of 3 relays (SIGTERM, replaced in turn), clients resuming on the next relay, poll ${cluster.pollMs} ms\n\n` +
    markdownTable(
      [
        'mode',
        'clients',
        'streams',
        'resumes',
        'recovered',
        'snapshots resent',
        'seq gaps',
        'upstream req/s steady',
        'upstream req/s during restart',
      ],
      cluster.runs.map((run) => [
        run.mode,
        run.clients,
        run.streams,
        run.counts.resumes,
        run.counts.recovered,
        run.counts.snapshotsResent,
        run.counts.gaps,
        fixed(run.steadyRequestsPerSec, 1),
        fixed(run.restartRequestsPerSec, 1),
      ]),
    );
  const [redis] = cluster.runs;
  if (redis !== undefined) {
    targets.push(
      target(
        'cluster: snapshots resent per resumed stream',
        redis.counts.snapshotsResent / Math.max(1, redis.counts.resumes),
        0,
      ),
      target('cluster: resumes not recovered', redis.counts.resumes - redis.counts.recovered, 0, 'streams'),
    );
  }
  return { section, targets };
}

export function clusterSpreadReport(spread: ClusterSpreadResult): Report {
  const section =
    `### 10b. Cluster: leases and poll CPU per relay, 3 relays, ${spread.markets} books subscribed on each, poll ${spread.pollMs} ms, ${spread.windowSeconds} s window\n\n` +
    markdownTable(
      ['relay', 'leases held', 'lease share', 'poll CPU share', 'process CPU (cores)'],
      spread.relays.map((relay, i) => [
        i,
        relay.leases,
        fixed(relay.leaseShare, 2),
        fixed(relay.pollCpuShare, 2),
        fixed(relay.cpu, 3),
      ]),
    );
  return { section, targets: [] };
}
