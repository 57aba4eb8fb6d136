/**
 * @module test/support/promtool
 * Prometheus' own checker of the exposition format (`promtool check metrics`, Debian package
 * `prometheus`). Outside CI a missing promtool skips the tests that use it, with a line saying so.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export const promtoolPath = (process.env.PATH ?? '')
  .split(delimiter)
  .map((folder) => join(folder, 'promtool'))
  .find((candidate) => existsSync(candidate));

/** In CI promtool is part of the job's set-up (.ci/run): a missing one must fail, not skip. */
export const runPromtoolTests = promtoolPath !== undefined || process.env.CI !== undefined;
if (!runPromtoolTests) {
  process.stdout.write('promtool tests skipped: install promtool (apt-get install prometheus)\n');
}

/** Runs `promtool check metrics` on a scrape; resolves with its exit code and what it printed. */
export function promtoolCheck(text: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(promtoolPath ?? 'promtool', ['check', 'metrics']);
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
    child.stdin.end(text);
  });
}
