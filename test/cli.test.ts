/**
 * The `market-relay` program as a user runs it: help and version, one-line errors with exit code 2,
 * and the ready line on stderr whatever the log level. Each program costs a second or more of CPU
 * (most of it loading the source through tsx), so one of each kind runs as a program; the other
 * spellings and bad values go through the same parsing in this process.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, parseCommandLine } from '../src/config/config.ts';
import { helpText } from '../src/config/help.ts';
import { waitFor } from './support/wait-for.ts';

const BIN = fileURLToPath(new URL('../bin/market-relay.js', import.meta.url));
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

async function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** What the program prints for `args`, as src/cli.ts prints it: help text, or its one-line error. */
function parsed(args: string[]): { help?: string; error?: string } {
  try {
    const command = parseCommandLine(args, {});
    return command.command === 'help' ? { help: helpText(command.topic) } : {};
  } catch (error) {
    if (error instanceof ConfigError) return { error: `market-relay: ${error.message}\n` };
    throw error;
  }
}

function expectServeHelp(text: string | undefined): void {
  expect(text).toContain('Usage:');
  expect(text).toContain('--upstream URL');
  expect(text).toContain('--heartbeat-ms MS');
}

// Each case runs a program of its own and shares nothing, so the cases of a group run side by side.
describe.concurrent('market-relay help and version', () => {
  it('--help prints the serve options on stdout, exit code 0', async () => {
    const { code, stdout, stderr } = await runCli(['--help']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expectServeHelp(stdout);
  });

  it.each([['-h'], ['help'], ['serve', '--help']])('%s asks for the same help', (...args) => {
    expect(parsed(args).help).toBe(parsed(['--help']).help);
    expectServeHelp(parsed(args).help);
  });

  it('help sim prints the simulator options', () => {
    const { help } = parsed(['help', 'sim']);
    expect(help).toContain('Options of sim');
    expect(help).toContain('--markets N');
    expect(help).not.toContain('--redis');
  });

  it('--version prints the version alone', async () => {
    expect(await runCli(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });
});

describe.concurrent('market-relay bad values', () => {
  it('a bad value: one line on stderr, nothing on stdout, exit code 2', async () => {
    const { code, stdout, stderr } = await runCli(['--port', '-1']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(parsed(['--port', '-1']).error);
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it.each([
    [['--port', '-1'], 'market-relay: invalid --port: got "-1", expected an integer from 0 to 65,535'],
    [
      ['--upstream', 'notaurl'],
      'market-relay: invalid --upstream: got "notaurl", expected `sim` or an http(s) URL',
    ],
    [['--port'], 'market-relay: --port needs a value'],
    [['--nope'], 'market-relay: unknown option --nope'],
    [['sim', '--redis', 'redis://x'], 'market-relay: unknown option --redis for sim'],
    [['dance'], 'market-relay: unknown command "dance"'],
  ])('%j: one line naming the problem', (args, line) => {
    const { error } = parsed(args);
    expect(error?.startsWith(line)).toBe(true);
    expect(error?.trimEnd().split('\n')).toHaveLength(1);
  });
});

describe('the ready line', () => {
  let child: ChildProcess | undefined;
  afterEach(async () => {
    if (child !== undefined && child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    child = undefined;
  });

  it.each([
    [['serve', '--markets', '3'], /market-relay listening on (http:\/\/127\.0\.0\.1:\d+)\n/],
    [['sim', '--markets', '3'], /market-relay sim listening on (http:\/\/127\.0\.0\.1:\d+)\n/],
  ])('%j prints it on stderr with --log-level warn', async (args, pattern) => {
    const started = spawn(process.execPath, [BIN, ...args, '--port', '0', '--log-level', 'warn']);
    child = started;
    let stderr = '';
    let stdout = '';
    started.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    started.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    const url = await waitFor('the ready line', () => pattern.exec(stderr)?.[1]);
    const response = await fetch(`${url}/health`);
    expect(response.status).toBe(200);
    // Nothing at info level reached the log.
    expect(stdout).not.toContain('"level":30');
  });
});
