/**
 * @module relay/coordination/redis/formats
 * The format versions of what a relay writes to Redis (docs/cluster.md "Upgrades"). Every value
 * carries the version of the format it was written in, beside it where old readers do not look (a
 * hash field, a stream entry field, a word of the lease, a tag on the writer's name before a
 * payload; absent: format 1, the release before versions). A relay writes the newest format of its
 * table and reads that one and the one before; a value of any other format is skipped, counted by
 * kind and logged once per kind, and the relay falls back to what needs no reading of it (it polls
 * for itself, or starts a stream over from a snapshot). The next release adds its format as one
 * entry at the end of the table, naming the kinds of values it lays out anew: the others it keeps
 * writing as before, so that relays of the release before still read them.
 */

/**
 * The kinds of values a relay reads back from Redis, each counted apart when unreadable. Leases
 * carry a format too but need no reading: every format starts one with its holder's name.
 */
export const formattedKinds = ['message', 'state', 'history', 'roster', 'budget'] as const;
export type FormattedKind = (typeof formattedKinds)[number];

/**
 * The kinds a format may lay out anew. The roster and the leases go with the relay's format as a
 * whole: relays of two formats spread no leases between them (docs/cluster.md "Upgrades").
 */
export type LaidOutKind = Exclude<FormattedKind, 'roster'>;

/** The values whose text a format may lay out its own way; the others are read by Lua scripts. */
export type FormattedText = 'message' | 'state' | 'history';

/** One format: its version, what it lays out anew, and how its values' text is written and read. */
export interface RedisFormat {
  version: number;
  /**
   * The kinds whose values this format lays out anew; the others it writes as the format before it
   * did (with that format's version), so that a relay of that format still reads them.
   */
  changes: readonly LaidOutKind[];
  /** The text of a `kind` value as this format stores it, from the layout this release works in. */
  encode(kind: FormattedText, text: string): string;
  /** The layout this release works in, from this format's text; undefined when it cannot be read. */
  decode(kind: FormattedText, text: string): string | undefined;
}

const sameText = {
  encode: (_kind: FormattedText, text: string) => text,
  decode: (_kind: FormattedText, text: string) => text,
};

const everyKind: readonly LaidOutKind[] = ['message', 'state', 'history', 'budget'];

/**
 * Format 1: the values of the release before versions, carrying no version. Format 2: the same
 * text, each value tagged with its version. Oldest first; a relay writes the last.
 */
export const shippedFormats: readonly RedisFormat[] = [
  { version: 1, changes: everyKind, ...sameText },
  { version: 2, changes: everyKind, ...sameText },
];

/** Told of the first value of a kind skipped, and its format when known. */
export type UnknownFormatListener = (kind: FormattedKind, version: string | undefined) => void;

/** The format a table writes values of `kind` in: the newest that lays them out anew (else its first). */
function writerIn(table: readonly RedisFormat[], kind: LaidOutKind): RedisFormat | undefined {
  return table.findLast((format) => format.changes.includes(kind)) ?? table[0];
}

/**
 * What a relay writes and reads: each kind in the format of its table that last laid it out, and
 * that one and the one its previous format wrote (one version back); and the count of values it
 * had to skip.
 */
export class RedisFormats {
  /** The relay's format as a whole: its leases and its place in the roster carry this version. */
  readonly written: RedisFormat;
  readonly #writers: ReadonlyMap<LaidOutKind, RedisFormat>;
  readonly #readers: ReadonlyMap<FormattedKind, ReadonlyMap<number, RedisFormat>>;
  readonly #skipped = new Map<FormattedKind, number>();
  readonly #onUnknown: UnknownFormatListener;

  /** `onUnknown` hears of the first value of each kind that could not be read (for a log line). */
  constructor(table: readonly RedisFormat[] = shippedFormats, onUnknown: UnknownFormatListener = () => {}) {
    const newest = table.at(-1);
    if (newest === undefined) throw new Error('no Redis format to write');
    this.written = newest;
    const previous = table.slice(0, -1);
    const readers = (kind: LaidOutKind) =>
      new Map(
        [writerIn(previous, kind), writerIn(table, kind)]
          .filter((format) => format !== undefined)
          .map((format) => [format.version, format]),
      );
    this.#writers = new Map(everyKind.map((kind) => [kind, writerIn(table, kind)!]));
    this.#readers = new Map<FormattedKind, ReadonlyMap<number, RedisFormat>>([
      ...everyKind.map((kind) => [kind, readers(kind)] as const),
      ['roster', new Map(table.slice(-2).map((format) => [format.version, format]))],
    ]);
    this.#onUnknown = onUnknown;
  }

  /** The format values of `kind` are written in. */
  writer(kind: LaidOutKind): RedisFormat {
    return this.#writers.get(kind)!;
  }

  /** The versions of `kind` this relay reads, as the Lua scripts take them: comma-separated. */
  readable(kind: FormattedKind): string {
    return [...this.#readers.get(kind)!.keys()].join(',');
  }

  /**
   * The format a value of `kind` tagged `version` (undefined: untagged, format 1) was written in,
   * when this relay reads it; undefined (and counted) when it does not.
   */
  reader(kind: FormattedKind, version: string | undefined): RedisFormat | undefined {
    const format = this.#readers.get(kind)!.get(version === undefined ? 1 : Number(version));
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
    const format = this.writer('message');
    return `${instanceId}:${format.version} ${format.encode('message', text)}`;
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
