/**
 * @module version
 * The relay's version, read once from package.json (shown on /health, the status page and metrics).
 */
import { readFileSync } from 'node:fs';

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export const version: string = packageJson.version;
