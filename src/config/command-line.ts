/**
 * @module config/command-line
 * The command line's words before any option is judged: `--name value`, `--name=value`, `-h`,
 * `--help`, `--version` and positionals; and the one-line error every bad value ends in.
 */

/**
 * A command line or configuration value that cannot be used: `message` is the one line the CLI
 * prints (naming the option, what was given and what is expected) before exiting with code 2.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
  /** The option concerned as the flag is spelt (`port`), or `command` / `arguments`. */
  readonly option: string;

  constructor(option: string, message: string) {
    super(message);
    this.option = option;
  }
}

export interface Arguments {
  positionals: string[];
  values: Map<string, string>;
  help: boolean;
  version: boolean;
}

/**
 * Every option takes a value, so `--port -1` reads `-1` as the port (and then rejects it). An option
 * `repeatable` says may be given again: its values are joined with commas, as its env twin lists them.
 */
export function splitArguments(
  argv: readonly string[],
  isOption: (name: string) => boolean,
  repeatable: (name: string) => boolean = () => false,
): Arguments {
  const parsed: Arguments = { positionals: [], values: new Map(), help: false, version: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      parsed.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '-h' || arg === '--help') parsed.help = true;
    else if (arg === '--version') parsed.version = true;
    else if (arg.startsWith('--')) {
      const equals = arg.indexOf('=');
      const name = equals === -1 ? arg.slice(2) : arg.slice(2, equals);
      if (!isOption(name)) {
        throw new ConfigError(name, `unknown option --${name} (market-relay --help lists the options)`);
      }
      const value = equals === -1 ? argv[++i] : arg.slice(equals + 1);
      if (value === undefined) throw new ConfigError(name, `--${name} needs a value`);
      const earlier = parsed.values.get(name);
      parsed.values.set(name, earlier !== undefined && repeatable(name) ? `${earlier},${value}` : value);
    } else if (arg.startsWith('-') && arg.length > 1) {
      throw new ConfigError(arg, `unknown option ${arg} (market-relay --help lists the options)`);
    } else parsed.positionals.push(arg);
  }
  return parsed;
}
