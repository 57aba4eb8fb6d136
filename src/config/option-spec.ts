/**
 * @module config/option-spec
 * How one command-line option is described: its environment twin, its zod schema, its default, what
 * a valid value looks like (for the one-line error) and its line in `--help`. A leaf, shared by the
 * configuration and the relay's tuning table.
 */
import { z } from 'zod';

export interface OptionSpec {
  env: string;
  schema: z.ZodType;
  /** The default as a command-line value would spell it; undefined = unset. */
  default: string | undefined;
  /** What a valid value looks like: `an integer from 0 to 65535`. */
  expected: string;
  /** The value's placeholder in `--help` (N, MS, URL, ...). */
  placeholder: string;
  /** One line for `--help`. */
  help: string;
  /** The meaning in docs/operations.md's table, when it says more than `help` (links, edge cases). */
  doc?: string;
  /**
   * How a rejected value is quoted in its error, which lands in terminals and container logs:
   * `secret` not at all (a key: its length only), `url` without user info or query values (where
   * a URL carries a password). Default: as given.
   */
  quote?: 'secret' | 'url';
}

/** A rejected value as its error shows it (`quote` above). */
export function quotedValue(spec: Pick<OptionSpec, 'quote'>, raw: string): string {
  if (spec.quote === 'secret') return `a value of ${raw.length} characters (not shown: a secret)`;
  if (spec.quote === 'url') {
    // Greedy to the last `@` of a URL: a password with a stray `/` or `,` is hidden whole.
    return JSON.stringify(raw.replace(/\/\/[^@\s]*@/g, '//***@').replace(/([?&][^=&#]*=)[^&#]*/g, '$1***'));
  }
  return JSON.stringify(raw);
}

/** An integer option from `min` to `max` (or unbounded above). */
export function integerOption(
  spec: Omit<OptionSpec, 'schema' | 'expected' | 'placeholder'> & {
    min: number;
    max?: number;
    placeholder?: string;
  },
): OptionSpec {
  const { min, max, placeholder = 'N', ...rest } = spec;
  const base = z
    .string()
    .trim()
    .regex(/^-?\d+$/)
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min)
        .max(max ?? Number.MAX_SAFE_INTEGER),
    );
  const expected =
    max === undefined
      ? `an integer of at least ${min.toLocaleString('en')}`
      : `an integer from ${min.toLocaleString('en')} to ${max.toLocaleString('en')}`;
  return { ...rest, schema: base, expected, placeholder };
}
