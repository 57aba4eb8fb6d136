/**
 * @module http/client-bundle
 * `GET /assets/client.js`: the client SDK's browser entry as one ES module, so the status page
 * imports the real SDK. `npm run build` bundles it (dist/src/http/assets/client.js); the relay only
 * reads that file, once, and serves it: no bundler runs inside the relay. Running from source, the
 * relay serves the bundle of the last build.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

/** The built bundle: beside this module when compiled, in dist/ when running from source. */
export function clientBundlePath(): string {
  const compiled = import.meta.url.endsWith('.js');
  return fileURLToPath(
    new URL(compiled ? './assets/client.js' : '../../dist/src/http/assets/client.js', import.meta.url),
  );
}

export function registerClientBundle(app: FastifyInstance, path: string = clientBundlePath()): void {
  let bundle: Promise<string> | undefined;
  app.get('/assets/client.js', async (_request, reply) => {
    bundle ??= readFile(path, 'utf8').catch((error: unknown) => {
      // A missing file is looked for again on the next request (a build may be under way).
      bundle = undefined;
      throw error;
    });
    try {
      const code = await bundle;
      return reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(code);
    } catch (error) {
      app.log.error({ err: error }, 'the client SDK bundle is missing: run `npm run build`');
      return reply
        .code(500)
        .type('text/plain; charset=utf-8')
        .send('the client SDK bundle is missing: run `npm run build`');
    }
  });
}
