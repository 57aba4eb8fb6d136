/**
 * @module bench/scenarios/capacity-report
 * The capacity scenario's section of the report (docs/benchmarks.md "Capacity") and its targets:
 * with every core of a 2-core machine used, the sustained deliveries per second at p99 <= 100 ms
 * at least 1.6x one process's, and upstream still asked for each book once per poll interval.
 */
import { availableParallelism } from 'node:os';
import { fixed, markdownTable, type Report, target } from '../lib/report.ts';
import {
  type CapacityResult,
  KEPT_PACE,
  P99_LIMIT_MS,
  perClientRate,
  type RampResult,
  type RampStep,
  sustains,
} from './capacity.ts';

/** CPU microseconds per delivery of a step: the server's, and its load generators'. */
function perDelivery(step: RampStep): { serverUs: number; generatorUs: number } {
  const per = (share: number) => (share * 1e6) / Math.max(1, step.deliveriesPerSec);
  return { serverUs: per(step.cpuShare), generatorUs: per(step.generatorCpuShare) };
}

/**
 * What this machine can hold for a server at all, with its load generators on the same cores: every
 * core busy with the server's and the generators' CPU per delivery (of its last step within the p99
 * limit). Above it no server of that cost can be measured here, whatever it would do alone.
 */
function machineBound(ramp: RampResult | undefined, cores: number): number | undefined {
  const within = ramp?.steps.filter(sustains).at(-1);
  if (within === undefined) return undefined;
  const { serverUs, generatorUs } = perDelivery(within);
  return (cores * 1e6) / (serverUs + generatorUs);
}

/** From this many clients, `--workers 2` should cost at most WORKERS_COST_LIMIT x one process per delivery (issue 50). */
const WORKERS_COST_FROM_CLIENTS = 2_000;
const WORKERS_COST_LIMIT = 1.15;

/**
 * At each client count both ramps reached: the server CPU per delivery of `--workers 2` over one
 * process's (issue 50, "every core, by its cost").
 */
export function workersCost(single: RampResult, workers: RampResult): { clients: number; ratio: number }[] {
  return workers.steps.flatMap((step) => {
    const alone = single.steps.find((candidate) => candidate.clients === step.clients);
    if (alone === undefined) return [];
    return [{ clients: step.clients, ratio: perDelivery(step).serverUs / perDelivery(alone).serverUs }];
  });
}

export function capacityReport(result: CapacityResult, openFilesLimit: string): Report {
  const { idle, ramps } = result;
  const idleTable = markdownTable(
    [
      'connections',
      'connected',
      'with snapshot',
      'RSS before / after (MB)',
      'RSS per connection (KB)',
      'relay CPU (cores)',
      'deliveries/s',
      'updates per client / stream',
      'sampled frames (failures)',
    ],
    [
      [
        idle.connections,
        idle.connected,
        idle.withSnapshot,
        `${fixed(idle.baseRssMb, 0)} / ${fixed(idle.rssMb, 0)}`,
        fixed(idle.rssPerConnectionKb),
        fixed(idle.cpuShare, 3),
        fixed(idle.deliveriesPerSec, 0),
        fixed(idle.updatesPerClient, 2),
        `${idle.sampledFrames} (${idle.sampleFailures})`,
      ],
    ],
  );
  const rampTable = markdownTable(
    [
      'server',
      'clients',
      'deliveries/s',
      'updates / client / s',
      'p50 (ms)',
      'p99 (ms)',
      'server CPU (cores)',
      'generators CPU (cores)',
      'CPU per delivery, server / generators (µs)',
      'book requests / market / poll',
      'sample failures',
    ],
    ramps.flatMap((ramp) =>
      ramp.steps.map((step) => [
        ramp.server,
        step.clients,
        fixed(step.deliveriesPerSec, 0),
        fixed(perClientRate(step), 2),
        fixed(step.latency.p50Ms),
        fixed(step.latency.p99Ms),
        fixed(step.cpuShare, 2),
        fixed(step.generatorCpuShare, 2),
        `${fixed(perDelivery(step).serverUs, 1)} / ${fixed(perDelivery(step).generatorUs, 1)}`,
        step.bookRequestsPerMarketPerPoll === undefined ? '-' : fixed(step.bookRequestsPerMarketPerPoll, 2),
        step.sampleFailures,
      ]),
    ),
  );
  const sustainedTable = markdownTable(
    [
      'server',
      `sustained deliveries/s at p99 <= ${P99_LIMIT_MS} ms`,
      `the same, clients at >= ${KEPT_PACE * 100} % of the first step's updates/s`,
    ],
    ramps.map((ramp) => [ramp.server, fixed(ramp.sustainedPerSec, 0), fixed(ramp.keptPacePerSec, 0)]),
  );
  const [single, workers] = ramps;
  const booksPerPoll = Math.max(...(workers?.steps.map((s) => s.bookRequestsPerMarketPerPoll ?? 0) ?? [0]));
  const cores = availableParallelism();
  const bound = machineBound(workers, cores);
  const boundLine =
    bound === undefined || single === undefined || single.sustainedPerSec === 0
      ? ''
      : `At the workers' CPU per delivery (theirs and their generators', last step within the limit), this machine's ${cores} cores hold at most ${fixed(bound, 0)} deliveries/s with the generators on them: ${fixed(bound / single.sustainedPerSec, 2)} x one process's sustained rate, the most \`--workers\` can show here.`;
  const costs = single === undefined || workers === undefined ? [] : workersCost(single, workers);
  const costTable =
    costs.length === 0
      ? ''
      : markdownTable(
          ['clients', `CPU per delivery, ${workers?.server} / ${single?.server}`],
          costs.map(({ clients, ratio }) => [clients, `${fixed(ratio, 2)} x`]),
        );
  const countedCosts = costs.filter(({ clients }) => clients >= WORKERS_COST_FROM_CLIENTS);
  const section = [
    '### 14. Capacity: idle connections on one process, and deliveries sustained by one process, every core and ws',
    '',
    'Idle: one relay process, heartbeats every 5 s, ten books changing every 5 s. Ramp: books polled every 50 ms, markets changing every 100 ms, clients added until p99 passes 100 ms.',
    '',
    `Per-process file limit here: \`ulimit -n\` ${openFilesLimit}; the generators hold at most 5,000 sockets each.`,
    '',
    idleTable,
    '',
    rampTable,
    '',
    ...(costTable === '' ? [] : [costTable, '']),
    sustainedTable,
    '',
    ...(boundLine === '' ? [] : [boundLine, '']),
  ].join('\n');
  return {
    section,
    targets: [
      // Stated as one process's share of two workers' rate: at most 1/1.6.
      target(
        'capacity: one process / --workers 2, sustained deliveries/s at p99 <= 100 ms',
        // No step of the workers within the limit: no ratio (shown as n/a, a miss).
        (single?.sustainedPerSec ?? 0) / (workers?.sustainedPerSec ?? 0),
        1 / 1.6,
      ),
      target('capacity: --workers 2, book requests per market per poll interval', booksPerPoll, 1, ''),
      target(
        `capacity: --workers 2 / one process, CPU per delivery, worst step from ${WORKERS_COST_FROM_CLIENTS} clients`,
        // No step both ramps reached: no ratio (shown as n/a, a miss).
        countedCosts.length === 0 ? Number.NaN : Math.max(...countedCosts.map(({ ratio }) => ratio)),
        WORKERS_COST_LIMIT,
      ),
      target('capacity: sampled frames failing seq or checksum', idle.sampleFailures, 0, ''),
    ],
  };
}
