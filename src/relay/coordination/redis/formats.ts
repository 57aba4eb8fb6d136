/**
 * @module relay/coordination/redis/formats
 * The format versions of what a relay writes to Redis (docs/cluster.md "Upgrades"). Every value
 * carries the version of the format it was written in, beside it where old readers do not look (a
 * hash field, a stream entry field, a word of the lease, a tag on the writer's name before a
 * payload; absent: format 1, the release before versions). A relay writes the newest format of its
 * table and reads that one and the one before; a value of any other format is skipped, counted by
 * kind and logged once per kind, and the relay falls back to what needs no reading of it (it polls
 * for itself, or starts a stream over from a snapshot). The next release adds its format as one
 * entry at the end of the table.
 */

/**
 * The kinds of values a relay reads back from Redis, each counted apart when unreadable. Leases
 * carry a format too but need no reading: every format starts one with its holder's name.
 */
export const formattedKinds = ['message', 'state', 'history', 'roster', 'budget'] as const;
export type FormattedKind = (typeof formattedKinds)[number];

/** The values whose text a format may lay out its own way; the others are read by Lua scripts. */
export type FormattedText = 'message' | 'state' | 'history';

/** One format: its version, and how its values' text is written and read back. */
export interface RedisFormat {
  version: number;
  /** The text of a `kind` value as this format stores it, from the layout this release works in. */
  encode(kind: FormattedText, text: string): string;
  /** The layout this release works in, from this format's text; undefined when it cannot be read. */
  decode(kind: FormattedText, text: string): string | undefined;
}

const sameText = {
  encode: (_kind: FormattedText, text: string) => text,
  decode: (_kind: FormattedText, text: string) => text,
};

/**
 * Format 1: the values of the release before versions, carrying no version. Format 2: the same
 * text, each value tagged with its version. Oldest first; a relay writes the last.
 */
export const shippedFormats: readonly RedisFormat[] = [
  { version: 1, ...sameText },
  { version: 2, ...sameText },
];

/** Told of the first value of a kind skipped, and its format when known. */
export type UnknownFormatListener = (kind: FormattedKind, version: string | undefined) => void;

/** Formats a relay reads: the one it writes and the one before. */
const READ_BACK = 2;

/** The format a relay writes, the ones it reads, and the count of values it had to skip. */
export class RedisFormats {
  /** The format every value is written in. */
  readonly written: RedisFormat;
  readonly #readable: ReadonlyMap<number, RedisFormat>;
  readonly #skipped = new Map<FormattedKind, number>();
  readonly #onUnknown: UnknownFormatListener;

  /** `onUnknown` hears of the first value of each kind that could not be read (for a log line). */
  constructor(table: readonly RedisFormat[] = shippedFormats, onUnknown: UnknownFormatListener = () => {}) {
    const newest = table.at(-1);
    if (newest === undefined) throw new Error('no Redis format to write');
    this.written = newest;
    this.#readable = new Map(table.slice(-READ_BACK).map((format) => [format.version, format]));
    this.#onUnknown = onUnknown;
  }

  /** The versions this relay reads, as the Lua scripts take them: comma-separated. */
  get readable(): string {
    return [...this.#readable.keys()].join(',');
  }

  /**
   * The format a value of `kind` tagged `version` (undefined: untagged, format 1) was written in,
   * when this relay reads it; undefined (and counted) when it does not.
   */
  reader(kind: FormattedKind, version: string | undefined): RedisFormat | undefined {
    const format = this.#readable.get(version === undefined ? 1 : Number(version));
    if (format === undefined) this.skip(kind, version ?? '1');
    return format;
  }

  /** `count` values of `kind` skipped as unreadable (some counted by a Lua script, their format untold). */
  skip(kind: FormattedKind, version: string | undefined, count = 1): void {
    if (count <= 0) return;
    const before = this.#skipped.get(kind) ?? 0;
    this.#skipped.set(kind, before + count);
    if (before === 0) this.#onUnknown(kind, version);
  }

  /** Values skipped so far, by kind. */
  skipped(): ReadonlyMap<FormattedKind, number> {
    return this.#skipped;
  }

  /** A payload on a target's channel: the writer and its format, then the value. */
  payload(instanceId: string, text: string): string {
    return `${instanceId}:${this.written.version} ${this.written.encode('message', text)}`;
  }
}

/** A payload's writer and format version (undefined: untagged) and its text. */
export function splitPayload(
  payload: string,
): { writer: string; version: string | undefined; text: string } | undefined {
  const separator = payload.indexOf(' ');
  if (separator < 0) return undefined;
  const [writer = '', version] = payload.slice(0, separator).split(':', 2);
  return { writer, version, text: payload.slice(separator + 1) };
}
