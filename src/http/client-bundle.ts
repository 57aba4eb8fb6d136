/**
 * @module http/client-bundle
 * `GET /assets/client.js`: the client SDK's browser entry bundled as one ES module in memory with
 * esbuild, once, on the first request, so the status page imports the real SDK with no build step.
 * From source it bundles `src/client/index.ts`; running compiled, `dist/client/index.js`.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

/** The SDK entry next to this module's tree: `.ts` when running from source, `.js` when compiled. */
export function clientEntry(): string {
  const source = fileURLToPath(new URL('../client/index.ts', import.meta.url));
  return existsSync(source) ? source : fileURLToPath(new URL('../client/index.js', import.meta.url));
}

export async function bundleClient(entry: string = clientEntry()): Promise<string> {
  // Loaded on demand: a relay nobody opens the status page of never pays for esbuild.
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
    legalComments: 'none',
  });
  const [output] = result.outputFiles;
  if (output === undefined) throw new Error('esbuild produced no output');
  return output.text;
}

export function registerClientBundle(app: FastifyInstance): void {
  let bundle: Promise<string> | undefined;
  app.get('/assets/client.js', async (_request, reply) => {
    bundle ??= bundleClient().catch((error: unknown) => {
      // A failed build is retried on the next request rather than cached.
      bundle = undefined;
      throw error;
    });
    try {
      const code = await bundle;
      return reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(code);
    } catch (error) {
      app.log.error({ err: error }, 'could not bundle the client SDK');
      return reply
        .code(500)
        .type('text/plain; charset=utf-8')
        .send(`could not bundle the client SDK: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
}
