/**
 * @module upstream/compiled-check
 * A zod schema turned into one plain predicate over parsed JSON, for the hot path: a polled order
 * book has over a hundred orders, and zod's per-field machinery (a result object per field, a check
 * pipeline per regex) costs more than `JSON.parse` of the same body. The schema stays the one
 * declaration (schemas.ts): the predicate is generated from its definition, accepts only JSON
 * values the schema accepts (test/upstream/compiled-check.property.test.ts) and only says yes or
 * no: a value it accepts is used as parsed; one it refuses goes through zod, which says what is
 * wrong (or, for the rare value only zod's output can carry, such as a record key `__proto__` that
 * zod drops, returns that output).
 *
 * Code is generated as zod does for its own objects (`new Function`), from the schema alone, never
 * from input: every object, array and record becomes a function of its own with its fields' checks
 * written out, so each property read and each call site sees one shape. Only the constructs the
 * upstream schemas use are compiled (object, also with a catchall of `anyJson` or unknown, array, string with regex, ISO datetime or
 * minimum length checks, number with the integer or lower bound checks, boolean, literal, string
 * enum, optional, record, unknown); a
 * schema with anything else, or a runtime that refuses code generation, gets no predicate and is
 * validated by zod alone.
 */
import { z } from 'zod';

/**
 * Any JSON value: the catchall of a record whose other fields are kept as upstream sent them. A body
 * parsed from JSON holds nothing else, so the predicate of an object with this catchall looks only
 * at the named fields.
 */
export const anyJson = z.json();

type Predicate = (value: unknown) => boolean;

/** The parts of a zod 4 definition read here (`schema.def`, documented for introspection). */
interface Definition {
  type: string;
  checks?: readonly { _zod: { def: CheckDefinition } }[];
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  element?: z.ZodType;
  innerType?: z.ZodType;
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  mode?: string;
  values?: readonly unknown[];
  entries?: Record<string, unknown>;
  format?: string;
  pattern?: RegExp;
}

interface CheckDefinition {
  check: string;
  format?: string;
  pattern?: RegExp;
  /** `min_length`. */
  minimum?: number;
  /** `greater_than`. */
  value?: unknown;
  inclusive?: boolean;
}

/** Raised while compiling: the schema uses a construct this module does not compile. */
class Unsupported extends Error {}

const compiled = new WeakMap<z.ZodType, Predicate | null>();

/**
 * The predicate of `schema`, built once per schema; undefined when the schema uses a construct
 * not compiled here (validate with zod then).
 */
export function compiledCheck<T>(schema: z.ZodType<T>): ((value: unknown) => value is T) | undefined {
  let predicate = compiled.get(schema);
  if (predicate === undefined) {
    try {
      predicate = new Generator().predicate(schema);
    } catch (error) {
      // EvalError: code generation is disallowed here (--disallow-code-generation-from-strings).
      if (!(error instanceof Unsupported) && !(error instanceof EvalError)) throw error;
      predicate = null;
    }
    compiled.set(schema, predicate);
  }
  // The predicate accepts only what the schema accepts, so it narrows to the schema's type.
  return (predicate ?? undefined) as ((value: unknown) => value is T) | undefined;
}

function definitionOf(schema: z.ZodType): Definition {
  return schema.def as unknown as Definition;
}

function required(schema: z.ZodType | undefined): z.ZodType {
  if (schema === undefined) throw new Unsupported('incomplete definition');
  return schema;
}

function noChecks(def: Definition): void {
  if (def.checks !== undefined && def.checks.length > 0) throw new Unsupported(`${def.type} checks`);
}

const IS_OBJECT = (value: string): string =>
  `(typeof ${value} === "object" && ${value} !== null && !Array.isArray(${value}))`;

/** Generates the predicates of one schema; the values they use are passed in as `k0`, `k1`, ... */
class Generator {
  readonly #constants: unknown[] = [];

  predicate(schema: z.ZodType): Predicate {
    return this.#compile(`return ${this.#expression(schema, 'v')};`);
  }

  #constant(value: unknown): string {
    this.#constants.push(value);
    return `k${this.#constants.length - 1}`;
  }

  /** A boolean expression over `value` (a variable or property read) that is true when it passes. */
  #expression(schema: z.ZodType, value: string): string {
    const def = definitionOf(schema);
    switch (def.type) {
      case 'object':
        return `${this.#constant(this.#objectCheck(def))}(${value})`;
      case 'array':
        return `${this.#constant(this.#arrayCheck(def))}(${value})`;
      case 'record':
        return `${this.#constant(this.#recordCheck(def))}(${value})`;
      case 'optional':
        return `(${value} === undefined || ${this.#expression(required(def.innerType), value)})`;
      case 'string':
        return this.#stringExpression(def, value);
      case 'number':
        return this.#numberExpression(def, value);
      case 'boolean':
        noChecks(def);
        return `(typeof ${value} === "boolean")`;
      case 'literal':
        return `${this.#constant(new Set(def.values))}.has(${value})`;
      case 'enum': {
        const entries = Object.entries(def.entries ?? {});
        // A string enum (z.enum([...])) maps each value to itself; native enums are left to zod.
        if (!entries.every(([key, entry]) => key === entry)) throw new Unsupported('native enum');
        return `${this.#constant(new Set(entries.map(([key]) => key)))}.has(${value})`;
      }
      case 'unknown':
        return 'true';
      default:
        throw new Unsupported(def.type);
    }
  }

  #objectCheck(def: Definition): Predicate {
    noChecks(def);
    // Other keys are never looked at: what a catchall of unknown asks, and of anyJson for a value
    // parsed from JSON.
    if (
      def.catchall !== undefined &&
      def.catchall !== anyJson &&
      definitionOf(def.catchall).type !== 'unknown'
    )
      throw new Unsupported('object catchall');
    const generator = new Generator();
    const fields = Object.entries(def.shape ?? {}).map(([key, field]) =>
      generator.#expression(field, `v[${JSON.stringify(key)}]`),
    );
    return generator.#compile(`return ${[IS_OBJECT('v'), ...fields].join(' && ')};`);
  }

  #arrayCheck(def: Definition): Predicate {
    noChecks(def);
    const generator = new Generator();
    const element = generator.#expression(required(def.element), 'v[i]');
    return generator.#compile(
      `if (!Array.isArray(v)) return false; for (let i = 0; i < v.length; i++) if (!${element}) return false; return true;`,
    );
  }

  #recordCheck(def: Definition): Predicate {
    noChecks(def);
    if (def.mode !== undefined) throw new Unsupported(`record mode ${def.mode}`);
    const keyType = required(def.keyType);
    if (definitionOf(keyType).type !== 'string') throw new Unsupported('record key type');
    const generator = new Generator();
    const key = generator.#expression(keyType, 'key');
    const value = generator.#expression(required(def.valueType), 'v[key]');
    // zod drops a key `__proto__` unchecked (it would set the prototype); the body as parsed still
    // has it, so such a body is left to zod, whose output is without it.
    return generator.#compile(
      `if (!${IS_OBJECT('v')}) return false; for (const key of Object.keys(v)) if (key === "__proto__" || !${key} || !${value}) return false; return true;`,
    );
  }

  /** A function of its own, `check(v)`, with the constants collected for `body`. */
  #compile(body: string): Predicate {
    const names = this.#constants.map((_, i) => `k${i}`);
    const make = new Function(...names, `return function check(v) { ${body} };`);
    return make(...this.#constants) as Predicate;
  }

  #stringExpression(def: Definition, value: string): string {
    const patterns: RegExp[] = [];
    // A string format (z.iso.datetime()) is its own check: its pattern is all it tests.
    if (def.format !== undefined) {
      if (def.format !== 'datetime' || def.pattern === undefined)
        throw new Unsupported(`format ${def.format}`);
      patterns.push(def.pattern);
    }
    const tests: string[] = [];
    for (const check of def.checks ?? []) {
      const { check: kind, format, pattern, minimum } = check._zod.def;
      if (kind === 'min_length' && Number.isSafeInteger(minimum)) {
        tests.push(` && ${value}.length >= ${minimum}`);
        continue;
      }
      if (kind !== 'string_format' || format !== 'regex' || pattern === undefined)
        throw new Unsupported(`string check ${kind}`);
      patterns.push(pattern);
    }
    if (patterns.some((pattern) => pattern.global || pattern.sticky)) throw new Unsupported('stateful regex');
    tests.push(...patterns.map((pattern) => ` && ${this.#constant(pattern)}.test(${value})`));
    return `(typeof ${value} === "string"${tests.join('')})`;
  }

  #numberExpression(def: Definition, value: string): string {
    let integer = false;
    const bounds: string[] = [];
    for (const check of def.checks ?? []) {
      const { check: kind, format, value: bound, inclusive } = check._zod.def;
      if (kind === 'greater_than' && typeof bound === 'number' && Number.isFinite(bound)) {
        bounds.push(` && ${value} ${inclusive === true ? '>=' : '>'} ${bound}`);
        continue;
      }
      if (kind !== 'number_format' || format !== 'safeint') throw new Unsupported(`number check ${kind}`);
      integer = true;
    }
    // zod's number refuses NaN and the infinities (JSON has neither, but the check is the schema's).
    const number = integer
      ? `Number.isSafeInteger(${value})`
      : `(typeof ${value} === "number" && Number.isFinite(${value}))`;
    return `(${number}${bounds.join('')})`;
  }
}
