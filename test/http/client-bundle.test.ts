/**
 * The status page's SDK bundle is a file the build makes; the relay only serves it. Without the
 * file the request gets a 500 that says what to do, and the relay keeps serving everything else.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { clientBundlePath, registerClientBundle } from '../../src/http/client-bundle.ts';

describe('GET /assets/client.js', () => {
  const dir = mkdtempSync(join(tmpdir(), 'client-bundle-'));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('serves the built file as it is, and asks for a build while it is missing', async () => {
    const path = join(dir, 'client.js');
    const app = Fastify();
    registerClientBundle(app, path);
    const missing = await app.inject('/assets/client.js');
    expect(missing.statusCode).toBe(500);
    expect(missing.body).toContain('npm run build');

    writeFileSync(path, 'export const connect = 1;');
    const served = await app.inject('/assets/client.js');
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toMatch(/^text\/javascript/);
    expect(served.body).toBe('export const connect = 1;');
    await app.close();
  });

  it('running from source, looks for the bundle in dist/', () => {
    expect(clientBundlePath()).toMatch(/dist[\\/]src[\\/]http[\\/]assets[\\/]client\.js$/);
  });
});
