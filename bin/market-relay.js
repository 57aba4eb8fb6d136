#!/usr/bin/env node
// In a clone, runs the TypeScript source through tsx, so an edit needs no build before `npm start`.
// An installed package carries only the compiled dist/ (package.json `files`), which runs as it is.
import { existsSync } from 'node:fs';

const source = new URL('../src/cli.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('../dist/src/cli.js');
}
