/**
 * @module config/help
 * `market-relay --help`, `help [command]` and `--version`: written from the option tables of
 * src/config/command-options.ts, so a new option is documented here the moment it exists.
 */

import { version } from '../util/version.ts';
import { type CommandName, commands } from './command-options.ts';
import type { OptionSpec } from './option-spec.ts';

export function versionText(): string {
  return `${version}\n`;
}

export function helpText(topic: CommandName = 'serve'): string {
  const options = Object.entries(commands[topic]);
  const flags = options.map(([name, spec]) => `--${name} ${spec.placeholder}`);
  const flagWidth = Math.max(...flags.map((flag) => flag.length));
  const envWidth = Math.max(...options.map(([, spec]) => spec.env.length));
  const rows = options.map(([, spec], i) => optionRow(flags[i]!.padEnd(flagWidth), spec, envWidth));
  return [
    `market-relay ${version}: real-time WebSocket relay for a poll-only prediction-market REST API`,
    '',
    'Usage:',
    '  market-relay [serve] [options]   the relay (default command)',
    '  market-relay sim [options]       the upstream simulator alone, with its metrics and admin API',
    '  market-relay help [command]      this help, or the options of one command',
    '  market-relay --version           the version',
    '',
    `Options of ${topic} (each has an environment twin; the flag wins):`,
    ...rows,
    '',
    topic === 'serve' ? 'Options of sim: market-relay help sim' : 'Options of serve: market-relay help serve',
    'Documentation: docs/operations.md (configuration, metrics, health), docs/upstream.md (simulator).',
    '',
  ].join('\n');
}

function optionRow(flag: string, spec: OptionSpec, envWidth: number): string {
  const fallback = spec.default === undefined ? 'unset' : spec.default;
  return `  ${flag}  ${spec.env.padEnd(envWidth)}  ${spec.help} (default ${fallback})`;
}
