#!/usr/bin/env node
// Runs the TypeScript source through tsx so that a fresh clone needs no build step
// (`npm install && npm start`); the Docker image runs the compiled `dist/cli.js` instead.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
