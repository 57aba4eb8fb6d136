/**
 * @module config/history-options
 * The options of the record of what the relay serves (docs/history.md): whether and where it
 * records (`--history`: the embedded store, or a shared PostgreSQL store's URL), where the embedded
 * store lives (`--data-dir`), and how much it keeps
 * (`--history-retention`, `--history-max-bytes`), how often it writes (`--history-flush-ms`), and which streams it holds with no subscriber so
 * that they are recorded (`--record`).
 */
import { z } from 'zod';
import { type Channel, channels } from '../../packages/protocol/src/protocol/messages.ts';
import { idsAreMarkets } from '../relay/channels/relay-registry.ts';
import type { RecordSelection } from '../relay/session/recording-holds.ts';
import type { OptionSpec } from './option-spec.ts';

/** What `serve` records into; undefined in a config = it records nothing. */
export type HistoryConfig = HistoryLimits &
  (
    | {
        /** The embedded store in `dataDir`: a relay alone. */
        store: 'embedded';
        dataDir: string;
      }
    | {
        /** The shared PostgreSQL store at `url`: every relay of a cluster records into it and reads it. */
        store: 'postgres';
        url: string;
      }
  );

interface HistoryLimits {
  retentionMs: number;
  maxBytes: number;
  /**
   * How long a served message waits in the buffer at most before it is written (the flush window;
   * `--history-flush-ms`, DEFAULT_HISTORY_FLUSH_MS unless set).
   */
  flushMs?: number;
}

/** `--history`'s URL form: PostgreSQL's own (`postgres://` or `postgresql://`). */
const POSTGRES_URL = /^postgres(ql)?:\/\/\S+$/;

/**
 * The flush window unless set: every write is one transaction, and at a few hundred messages a
 * second a write a second cost the relay about 10 % more CPU than one every 4 s (`npm run bench --
 * history`), while a SIGKILL loses at most this much of the record.
 */
export const DEFAULT_HISTORY_FLUSH_MS = 4_000;

const DURATION_UNITS_MS: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: 86_400_000 };
const SIZE_UNITS: Readonly<Record<string, number>> = {
  '': 1,
  KiB: 1024,
  MiB: 1024 ** 2,
  GiB: 1024 ** 3,
  TiB: 1024 ** 4,
};

export const historyOptions = {
  history: {
    env: 'HISTORY',
    doc: '`off`; `embedded`: record every message served into the embedded store in `--data-dir`; or a `postgres://user:password@host:port/database` URL: the shared store every relay of a cluster records into and reads ([history.md](history.md#the-shared-store-postgresql), [cluster.md](cluster.md#one-history-for-the-cluster))',
    schema: z.union([z.enum(['off', 'embedded']), z.string().trim().regex(POSTGRES_URL)]),
    default: 'embedded',
    expected: '`off`, `embedded` or a postgres:// URL',
    placeholder: 'off|embedded|URL',
    help: 'record every message served (embedded, or a postgres:// URL shared by a cluster) or not (off)',
  },
  'data-dir': {
    env: 'DATA_DIR',
    doc: 'where the embedded history store lives (created when missing)',
    schema: z.string().trim().min(1),
    default: './market-relay-data',
    expected: 'a folder path',
    placeholder: 'DIR',
    help: 'where the embedded history store lives',
  },
  'history-retention': {
    env: 'HISTORY_RETENTION',
    doc: 'how long recorded messages are kept (`90m`, `24h`, `7d`), enforced while running',
    schema: z
      .string()
      .trim()
      .regex(/^\d+(m|h|d)$/)
      .transform((text) => Number(text.slice(0, -1)) * DURATION_UNITS_MS[text.slice(-1)]!)
      .pipe(
        z
          .number()
          .int()
          .min(60_000)
          .max(3650 * 86_400_000),
      ),
    default: '24h',
    expected: 'a duration of at least 1m such as 90m, 24h or 7d',
    placeholder: 'DURATION',
    help: 'how long recorded messages are kept (90m, 24h, 7d)',
  },
  'history-max-bytes': {
    env: 'HISTORY_MAX_BYTES',
    doc: 'the most the history store may hold (`512MiB`, `1GiB`, or bytes); past it the oldest records go first',
    schema: z
      .string()
      .trim()
      .regex(/^\d+(KiB|MiB|GiB|TiB)?$/)
      .transform((text) => {
        const [, digits = '', unit = ''] = /^(\d+)(\D*)$/.exec(text) ?? [];
        return Number(digits) * SIZE_UNITS[unit]!;
      })
      .pipe(
        z
          .number()
          .int()
          .min(1024 ** 2),
      ),
    default: '1GiB',
    expected: 'a size of at least 1MiB such as 512MiB or 1GiB (or a number of bytes)',
    placeholder: 'SIZE',
    help: 'the most the history store may hold (512MiB, 1GiB)',
  },
  'history-flush-ms': {
    env: 'HISTORY_FLUSH_MS',
    doc: 'the flush window: buffered messages are written at least this often, and a relay killed outright (SIGKILL) loses at most this much of its record; each write is one transaction, so a shorter window costs more CPU ([history.md](history.md#durability-the-flush-window))',
    schema: z.coerce.number().int().min(100).max(5_000),
    default: String(DEFAULT_HISTORY_FLUSH_MS),
    expected: 'an integer from 100 to 5,000 (ms)',
    placeholder: 'MS',
    help: 'how often buffered messages are written (ms): what a SIGKILL may lose',
  },
  record: {
    env: 'RECORD',
    doc: '`<channel>:<ids or *>`: streams held with no subscriber, so that they are recorded; repeatable, comma-separated in the env (`book:*,price:*`; `book:<id>,<id>` for several ids of one channel); `*` = every market the catalogue lists as active, now and later ([history.md](history.md#recording-with-no-subscriber))',
    schema: z.string().transform((text, context) => {
      const selections = recordSelections(text);
      if (selections === undefined) context.addIssue({ code: 'custom', message: 'bad --record' });
      return selections ?? [];
    }),
    default: undefined,
    expected: '<channel>:<ids or *>, such as book:* or price:<market id>,<market id>',
    placeholder: 'CHANNEL:IDS',
    help: 'hold streams with no subscriber so they are recorded (book:*, price:<id>,<id>); repeatable',
  },
} satisfies Record<string, OptionSpec>;

/**
 * `book:*,price:<id>,<id>`: each item names its channel, or continues the one before it. Undefined
 * when an item has no channel, the channel is unknown, or `*` is asked of a channel whose ids are
 * not markets (or beside ids of its own).
 */
function recordSelections(text: string): RecordSelection[] | undefined {
  const selections: { channel: Channel; markets: string[] }[] = [];
  for (const item of text.split(',').map((part) => part.trim())) {
    if (item === '') return undefined;
    const colon = item.indexOf(':');
    if (colon !== -1) {
      const channel = item.slice(0, colon);
      if (!(channels as readonly string[]).includes(channel)) return undefined;
      selections.push({ channel: channel as Channel, markets: [] });
    }
    const current = selections.at(-1);
    const id = colon === -1 ? item : item.slice(colon + 1);
    if (current === undefined || id === '') return undefined;
    current.markets.push(id);
  }
  const wildcardOk = ({ channel, markets }: RecordSelection) =>
    !markets.includes('*') || (markets.length === 1 && idsAreMarkets(channel));
  return selections.every(wildcardOk) ? selections : undefined;
}

/** The history part of a `serve` config from the options read. */
export function historyConfig(
  read: (name: keyof typeof historyOptions) => unknown,
): HistoryConfig | undefined {
  const history = read('history') as string;
  if (history === 'off') return undefined;
  const limits = {
    retentionMs: read('history-retention') as number,
    maxBytes: read('history-max-bytes') as number,
    flushMs: read('history-flush-ms') as number,
  };
  if (history === 'embedded') return { store: 'embedded', dataDir: read('data-dir') as string, ...limits };
  return { store: 'postgres', url: history, ...limits };
}
