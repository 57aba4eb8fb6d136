/**
 * @module http/status-page
 * `GET /` and `GET /assets/status/<file>`: the status page's static files (HTML, CSS, browser ES
 * modules), read from the browser app's own folder, `src/status-page/`, on each request, with no
 * build step. Running compiled from `dist/`, `npm run build` has copied it to `dist/src/status-page/`:
 * either way the folder sits one level up from this module.
 */
import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
};

/** Plain file names only: no path separators, so a request can never leave the folder. */
const FILE_NAME = /^[a-z0-9-]+\.(html|css|js)$/;

export function statusPageDirectory(): string {
  return fileURLToPath(new URL('../status-page/', import.meta.url));
}

export function registerStatusPage(app: FastifyInstance, directory: string = statusPageDirectory()): void {
  const serve = async (name: string, reply: FastifyReply) => {
    if (!FILE_NAME.test(name)) return reply.code(404).send({ error: 'not_found' });
    let body: Buffer;
    try {
      body = await readFile(join(directory, name));
    } catch {
      return reply.code(404).send({ error: 'not_found' });
    }
    return reply
      .type(CONTENT_TYPES[extname(name)] ?? 'application/octet-stream')
      .header('cache-control', 'no-cache')
      .send(body);
  };
  app.get('/', (_request, reply) => serve('index.html', reply));
  app.get<{ Params: { file: string } }>('/assets/status/:file', (request, reply) =>
    serve(request.params.file, reply),
  );
}
