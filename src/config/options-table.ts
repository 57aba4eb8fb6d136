/**
 * @module config/options-table
 * docs/operations.md's tables of options, made from the same option specs as the flags, the
 * environment twins and `--help` (test/docs/options-table.test.ts keeps the document equal to them).
 * Each table is one section of the document; every option of every command is in exactly one.
 */
import { type CommandName, commands } from './command-options.ts';
import type { OptionSpec } from './option-spec.ts';
import { MARKETS_OPTION } from './sim-options.ts';

/** The document's tables, by the name of the marker around each, and the options in it in order. */
export const optionSections: Readonly<Record<string, readonly string[]>> = {
  operator: [
    'operator-port',
    'operator-host',
    'operator-key',
    'max-status-viewers',
    'status-viewer-buffer-bytes',
  ],
  configuration: [
    'port',
    'host',
    'upstream',
    'redis',
    'workers',
    'book-poll-ms',
    'price-poll-ms',
    'upstream-concurrency',
    'upstream-rps',
    'fail-open-rps-fraction',
    'scheduler',
    'max-age-ms',
    'max-private-markets',
    'max-private-markets-per-key',
    'new-markets-per-second',
    'new-markets-per-second-per-key',
    'unknown-lookups-per-second',
    'max-rest-paths',
    'max-rest-paths-per-address',
    'max-catalogue-filters',
    'max-catalogue-filters-per-address',
    'max-candle-streams',
    'max-candle-streams-per-address',
    'new-streams-per-second-per-address',
    'unconfirmed-paths-per-second-per-address',
    'api-keys',
    'allowed-origins',
    'log-level',
    'compression',
    MARKETS_OPTION,
    'seed',
    'profile',
    'sim-profile',
    'sim-tick-ms',
  ],
  history: ['history', 'data-dir', 'history-retention', 'history-max-bytes', 'history-flush-ms', 'record'],
  limits: [
    'heartbeat-ms',
    'confirm-ms',
    'linger-ms',
    'resume-buffer',
    'resume-buffer-bytes',
    'history-ms',
    'lease-ms',
    'rebalance-ms',
    'stale-after-polls',
    'max-connections',
    'max-frame-bytes',
    'upstream-timeout-ms',
    'upstream-retries',
    'upstream-down-after-ms',
    'max-streams-per-connection',
    'client-rps',
    'client-burst',
    'send-high-water-bytes',
    'send-max-buffer-bytes',
    'slow-consumer-timeout-ms',
    'flood-close-after-ms',
    'close-grace-ms',
    'slow-consumer-linger-ms',
    'coalesce-ms',
    'rest-cache-ms',
    'rest-cache-entries',
    'rest-budget-percent',
    'rest-queue',
  ],
  edge: [
    'max-connections-per-address',
    'connection-rate-per-address',
    'connection-burst-per-address',
    'max-connections-per-key',
    'max-pending-connections',
    'max-pending-per-address',
    'headers-timeout-ms',
    'ipv6-prefix-length',
    'auth-free-failures',
    'auth-lockout-failures',
    'auth-lockout-ms',
    'trusted-proxy-depth',
  ],
  traces: ['otel-endpoint', 'otel-sample-ratio'],
  shutdown: ['drain-ms'],
};

/** The markdown table of one section: flag, environment twin, default, valid values, meaning. */
export function optionsTable(section: string): string {
  const names = optionSections[section];
  if (names === undefined) throw new Error(`no options section "${section}"`);
  const rows = names.map((name) => {
    const specs = (Object.keys(commands) as CommandName[]).flatMap((command) => {
      const spec = commands[command][name];
      return spec === undefined ? [] : [{ command, spec }];
    });
    const first = specs[0];
    if (first === undefined) throw new Error(`section "${section}" lists --${name}, which no command has`);
    const cells = [
      `\`--${name}\``,
      `\`${first.spec.env}\``,
      defaults(specs),
      first.spec.expected,
      (first.spec.doc ?? first.spec.help).replaceAll('|', '\\|'),
    ];
    return `| ${cells.join(' | ')} |`;
  });
  return ['| flag | env | default | valid values | meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** `8080 (sim: 9090)` when the commands differ, else the one default; `unset` for none. */
function defaults(specs: readonly { command: CommandName; spec: OptionSpec }[]): string {
  const [first, ...others] = specs;
  const text = (spec: OptionSpec): string => spec.default ?? 'unset';
  const differing = others.filter(({ spec }) => text(spec) !== text(first!.spec));
  return [text(first!.spec), ...differing.map(({ command, spec }) => `(${command}: ${text(spec)})`)].join(
    ' ',
  );
}
