/**
 * @module bench/history/arm-figures
 * The recording arms' order and figures, pure. Each round runs every arm at once, over one window
 * (./recording-arms.ts), started one after another, and a run takes every start order equally
 * often (off, embedded; embedded, off; of three arms all six orders): the arm started later costs
 * several percent more CPU per message in the same window (measured: 1.09 and 1.05 with recording
 * started second, 0.94 and 1.00 with it first), so every arm takes every place, and starts before
 * and after each other arm, equally often, and the figures are means over the rounds, where those
 * places cancel (a median of an unbalanced run kept the bias). A round's figures pair its recording arms with its `off` arm:
 * CPU per message on over off (the run's figure their geometric mean), event-loop p99 on minus off
 * and the CPU per message recording adds, on minus off (their arithmetic means).
 */

/** Recording nothing, into the embedded store, into the shared PostgreSQL store. */
export type Arm = 'off' | 'embedded' | 'postgres';
export type RecordingArm = Exclude<Arm, 'off'>;

/** What the figures read of one arm's window. */
export interface ArmSample {
  arm: Arm;
  round: number;
  cpuPerMessageUs: number;
  loopDelayP99Ms: number;
}

export interface StoreFigures {
  /** Relay CPU per message, on over off: the rounds' geometric mean, and their range. */
  cpuRatio: number;
  cpuRatioRange: [number, number];
  /** Relay CPU per message recording adds (on minus off, µs): the rounds' mean. */
  addedCpuUs: number;
  /** Event-loop p99, on minus off (ms): the rounds' mean. */
  loopDelayP99AddedMs: number;
}

/** The rounds a run of `arms` arms takes for at least `asked`: whole sets of every start order. */
export function wholeOrderSets(asked: number, arms: number): number {
  const orders = factorial(arms);
  return Math.max(1, Math.ceil(asked / orders)) * orders;
}

/**
 * The start order of `arms` in `round` (from 1): the orders taken in turn, every one of them once
 * in each set of rounds, so each arm starts in every place, and before and after each other arm,
 * equally often (a rotation alone balances the places, but of three arms it starts one after
 * another in two rounds of three).
 */
export function armOrder<A>(arms: readonly A[], round: number): A[] {
  const orders = permutations(arms);
  return [...(orders[(round - 1) % orders.length] ?? arms)];
}

function permutations<A>(items: readonly A[]): A[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((first, index) =>
    permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [first, ...rest]),
  );
}

function factorial(n: number): number {
  return n <= 1 ? 1 : n * factorial(n - 1);
}

/** Each recording arm's figures against the `off` arm of its round; absent for an arm never run. */
export function storeFigures(samples: readonly ArmSample[]): Partial<Record<RecordingArm, StoreFigures>> {
  const figures: Partial<Record<RecordingArm, StoreFigures>> = {};
  for (const arm of ['embedded', 'postgres'] as const) {
    const ratios: number[] = [];
    const added: number[] = [];
    const loop: number[] = [];
    for (const [off, on] of pairs(samples, arm)) {
      ratios.push(on.cpuPerMessageUs / off.cpuPerMessageUs);
      added.push(on.cpuPerMessageUs - off.cpuPerMessageUs);
      loop.push(on.loopDelayP99Ms - off.loopDelayP99Ms);
    }
    if (ratios.length === 0) continue;
    figures[arm] = {
      cpuRatio: geometricMean(ratios),
      cpuRatioRange: [Math.min(...ratios), Math.max(...ratios)],
      addedCpuUs: mean(added),
      loopDelayP99AddedMs: mean(loop),
    };
  }
  return figures;
}

/**
 * The shared store's recording cost over the embedded store's (issue 48: at most 1.2x): the CPU per
 * message each adds to the relay, the means of the rounds', one over the other. NaN when the
 * embedded store's added cost is not above zero (lost in the machine's noise): no ratio to give.
 */
export function sharedOverEmbedded(figures: Partial<Record<RecordingArm, StoreFigures>>): number | undefined {
  const { embedded, postgres } = figures;
  if (embedded === undefined || postgres === undefined) return undefined;
  return embedded.addedCpuUs > 0 ? postgres.addedCpuUs / embedded.addedCpuUs : Number.NaN;
}

function* pairs(samples: readonly ArmSample[], arm: RecordingArm): Generator<[ArmSample, ArmSample]> {
  for (const round of new Set(samples.map((sample) => sample.round))) {
    const off = samples.find((sample) => sample.round === round && sample.arm === 'off');
    const on = samples.find((sample) => sample.round === round && sample.arm === arm);
    if (off !== undefined && on !== undefined) yield [off, on];
  }
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

function geometricMean(values: readonly number[]): number {
  return Math.exp(mean(values.map(Math.log)));
}
