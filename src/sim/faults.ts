/**
 * @module sim/faults
 * Fault injection for the simulator's HTTP answers: added latency, 500s, 429s with Retry-After, and
 * bodies that are not JSON or break the schema. Draws come from their own seeded PRNG, so turning
 * faults on never changes how markets evolve.
 */
import { createPrng, deriveSeed, type Prng } from './prng.ts';

export interface SimulatorFaults {
  /** Added delay before every response (default 0). */
  latencyMs: number;
  /** Probability 0..1 that a request gets a 500 (default 0). */
  errorRate: number;
  /** Probability 0..1 of a 429 with `Retry-After: 1` (default 0). */
  rateLimitRate: number;
  /** Probability 0..1 that the body is replaced by invalid JSON or a schema-violating body (default 0). */
  malformedRate: number;
}

export type InjectedFault = 'error' | 'rate-limit' | 'malformed';

export const NO_FAULTS: SimulatorFaults = { latencyMs: 0, errorRate: 0, rateLimitRate: 0, malformedRate: 0 };

export class FaultInjector {
  private faults: SimulatorFaults = { ...NO_FAULTS };
  private readonly rng: Prng;

  constructor(seed: number, faults: Partial<SimulatorFaults> = {}) {
    this.rng = createPrng(deriveSeed(seed, 'faults'));
    this.set(faults);
  }

  get current(): SimulatorFaults {
    return { ...this.faults };
  }

  /** Changes the given knobs, keeps the others. */
  set(faults: Partial<SimulatorFaults>): void {
    const next = { ...this.faults, ...faults };
    if (!Number.isFinite(next.latencyMs) || next.latencyMs < 0)
      throw new RangeError('latencyMs must be >= 0');
    for (const name of ['errorRate', 'rateLimitRate', 'malformedRate'] as const) {
      const rate = next[name];
      if (!(rate >= 0 && rate <= 1)) throw new RangeError(`${name} must be between 0 and 1`);
    }
    this.faults = next;
  }

  /** At most one fault per request, tried in this order: 500, then 429, then a malformed body. */
  draw(): InjectedFault | undefined {
    if (this.faults.errorRate > 0 && this.rng.next() < this.faults.errorRate) return 'error';
    if (this.faults.rateLimitRate > 0 && this.rng.next() < this.faults.rateLimitRate) return 'rate-limit';
    if (this.faults.malformedRate > 0 && this.rng.next() < this.faults.malformedRate) return 'malformed';
    return undefined;
  }

  /**
   * Half the time the JSON text cut short (a proper prefix of an object is never JSON); otherwise
   * valid JSON that breaks every response schema: the first field dropped, every leaf's type swapped.
   */
  corrupt(body: unknown, text: string): string {
    if (this.rng.chance(0.5)) return text.slice(0, Math.floor(text.length / 2));
    return JSON.stringify(breakSchema(body, true));
  }
}

function breakSchema(value: unknown, top: boolean): unknown {
  if (Array.isArray(value)) return value.map((item) => breakSchema(item, false));
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).slice(top ? 1 : 0);
    return Object.fromEntries(entries.map(([key, item]) => [key, breakSchema(item, false)]));
  }
  if (typeof value === 'string') return value.length;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return 'null';
}
