/**
 * @module bench/lib/long-soak/analysis
 * What the long soak concludes from its samples (pure): each figure's growth after the warm-up as
 * a least-squares slope in % of its warm-up value per hour, its value at the end against the one at
 * the end of the warm-up, and the pass criteria of issue 51 judged one by one.
 */

/** One figure of one relay at one time: minutes since the load started. */
export interface Point {
  minute: number;
  value: number;
  /** The connections the relay held at that instant, when known: the fit can hold them constant. */
  connections?: number;
}

/** Least-squares slope of `points` in value per minute; NaN for fewer than two distinct minutes. */
export function leastSquaresSlope(points: readonly Point[]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const meanMinute = points.reduce((sum, point) => sum + point.minute, 0) / n;
  const meanValue = points.reduce((sum, point) => sum + point.value, 0) / n;
  let covariance = 0;
  let variance = 0;
  for (const point of points) {
    covariance += (point.minute - meanMinute) * (point.value - meanValue);
    variance += (point.minute - meanMinute) ** 2;
  }
  return variance === 0 ? Number.NaN : covariance / variance;
}

/**
 * The slope in time (value per minute) of `value = a + b * minute + c * connections`, fitted by
 * least squares: the growth a figure shows with the number of clients connected held constant, so
 * that a crowd larger at the end than at minute 5 is not taken for a leak, nor a smaller one for a
 * recovery. Points without `connections`, or connections that never vary, give the plain slope.
 */
export function slopeWithConnectionsHeld(points: readonly Point[]): number {
  const known = points.filter(
    (point) => point.connections !== undefined && Number.isFinite(point.connections),
  );
  if (known.length < 3 || known.length < points.length) return leastSquaresSlope(points);
  const n = known.length;
  const meanOf = (pick: (point: Point) => number) => known.reduce((sum, point) => sum + pick(point), 0) / n;
  const [t, x, y] = [meanOf((p) => p.minute), meanOf((p) => p.connections!), meanOf((p) => p.value)];
  let stt = 0;
  let sxx = 0;
  let stx = 0;
  let sty = 0;
  let sxy = 0;
  for (const point of known) {
    const [dt, dx, dy] = [point.minute - t, point.connections! - x, point.value - y];
    stt += dt * dt;
    sxx += dx * dx;
    stx += dt * dx;
    sty += dt * dy;
    sxy += dx * dy;
  }
  const determinant = stt * sxx - stx * stx;
  // Connections constant, or moving in lockstep with time: time's own share cannot be told apart.
  if (sxx === 0 || Math.abs(determinant) <= 1e-9 * stt * sxx) return leastSquaresSlope(points);
  return (sxx * sty - stx * sxy) / determinant;
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((sum, value) => sum + value, 0) / values.length;
}

export interface Growth {
  /** Mean of the samples within half a minute of the warm-up's end. */
  atWarmup: number;
  /** Mean of the samples of the last minute. */
  atEnd: number;
  /** (atEnd - atWarmup) / atWarmup, in %. */
  endChangePercent: number;
  /** The fitted slope after the warm-up, in % of `atWarmup` per hour. */
  percentPerHour: number;
  /** The same with the connections held constant (`slopeWithConnectionsHeld`). */
  percentPerHourConnectionsHeld: number;
}

/**
 * A figure's growth after `warmupMinutes`. One sample is one instant of a figure that moves with
 * the clients connected at that instant, so both ends are averaged over a minute rather than read
 * from one sample each.
 */
export function growthAfterWarmup(points: readonly Point[], warmupMinutes: number): Growth {
  const after = points.filter((point) => point.minute >= warmupMinutes);
  const lastMinute = after.at(-1)?.minute ?? Number.NaN;
  const atWarmup = mean(
    after.filter((point) => Math.abs(point.minute - warmupMinutes) <= 0.5).map((point) => point.value),
  );
  const atEnd = mean(after.filter((point) => point.minute > lastMinute - 1).map((point) => point.value));
  const percentPerHour = (slopePerMinute: number) => ((slopePerMinute * 60) / atWarmup) * 100;
  return {
    atWarmup,
    atEnd,
    endChangePercent: ((atEnd - atWarmup) / atWarmup) * 100,
    percentPerHour: percentPerHour(leastSquaresSlope(after)),
    percentPerHourConnectionsHeld: percentPerHour(slopeWithConnectionsHeld(after)),
  };
}

/**
 * Within 5 % of the warm-up value at the end, or fitted growth under 1 % an hour (plain, or with
 * the connections held constant).
 */
export const FLAT_END_PERCENT = 5;
export const FLAT_SLOPE_PERCENT_PER_HOUR = 1;
/** Event-loop delay p99 at most this in every sample. */
export const EVENT_LOOP_P99_LIMIT_MS = 50;

export function isFlat(growth: Growth): boolean {
  // A figure at 0 throughout (no Redis keys, say) is flat; NaN percentages then mean "no change".
  if (growth.atWarmup === 0 && growth.atEnd === 0) return true;
  return (
    Math.abs(growth.endChangePercent) <= FLAT_END_PERCENT ||
    growth.percentPerHour < FLAT_SLOPE_PERCENT_PER_HOUR ||
    growth.percentPerHourConnectionsHeld < FLAT_SLOPE_PERCENT_PER_HOUR
  );
}

export interface Criterion {
  name: string;
  /** What was measured, for the record. */
  measured: string;
  pass: boolean;
}

const signed = (value: number, digits: number) =>
  Number.isFinite(value) ? `${value >= 0 ? '+' : ''}${value.toFixed(digits)}` : 'n/a';

/** One figure's criterion, across every relay: each relay's series must be flat. */
export function flatCriterion(
  name: string,
  perRelay: readonly (readonly Point[])[],
  warmupMinutes: number,
): Criterion {
  const growths = perRelay.map((points) => growthAfterWarmup(points, warmupMinutes));
  return {
    name,
    measured: growths
      .map(
        (growth) =>
          `${signed(growth.endChangePercent, 1)} % at end, ${signed(growth.percentPerHour, 2)} %/h fitted (${signed(growth.percentPerHourConnectionsHeld, 2)} %/h with connections held)`,
      )
      .join('; '),
    pass: growths.length > 0 && growths.every(isFlat),
  };
}

/**
 * The worst p99 of every relay's samples; with `steal` (the machine's steal at each sample), the
 * samples over the limit say how much of the machine the hypervisor took while they ran.
 */
export function eventLoopCriterion(
  perRelay: readonly (readonly Point[])[],
  steal: readonly Point[] = [],
): Criterion {
  const points = perRelay.flat();
  const worst = Math.max(...points.map((point) => point.value));
  const stealAt = new Map(steal.map((point) => [point.minute, point.value]));
  const over = [
    ...new Set(points.filter((point) => point.value >= EVENT_LOOP_P99_LIMIT_MS).map((point) => point.minute)),
  ]
    .sort((a, b) => a - b)
    .filter((minute) => stealAt.has(minute))
    .map((minute) => `${minute.toFixed(1)} (${stealAt.get(minute)!.toFixed(1)} %)`);
  return {
    name: `event-loop delay p99 < ${EVENT_LOOP_P99_LIMIT_MS} ms in every sample`,
    measured: `worst ${Number.isFinite(worst) ? worst.toFixed(1) : 'n/a'} ms${
      over.length > 0
        ? `; over the limit at minutes ${over.join(', ')} (in brackets, the machine's steal)`
        : ''
    }`,
    pass: Number.isFinite(worst) && worst < EVENT_LOOP_P99_LIMIT_MS,
  };
}
