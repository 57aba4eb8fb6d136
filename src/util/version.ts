/**
 * @module version
 * The relay's version, read once from package.json (shown on /health, the status page and metrics).
 */
import { readFileSync } from 'node:fs';

// Compiled, this module is dist/src/util/version.js: one folder deeper than its source.
const compiled = import.meta.url.endsWith('.js');
const packageJson = JSON.parse(
  readFileSync(new URL(compiled ? '../../../package.json' : '../../package.json', import.meta.url), 'utf8'),
) as { version: string };

export const version: string = packageJson.version;
