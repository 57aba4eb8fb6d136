/**
 * @module http/status-events
 * The status page's live feed: `GET /status/events` (Server-Sent Events, one `status` event with the
 * whole snapshot at once and then every second) and `GET /status/snapshot` (the same document once,
 * for scripts). One timer serves every viewer and runs only while someone watches; on shutdown every
 * feed is ended first, so that open pages never hold the HTTP server open.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { StatusSnapshot } from '../observability/status-snapshot.ts';

export const STATUS_PUSH_MS = 1_000;

export function registerStatusEvents(app: FastifyInstance, snapshot: () => StatusSnapshot): void {
  const viewers = new Set<ServerResponse>();
  let timer: NodeJS.Timeout | undefined;

  const push = (targets: Iterable<ServerResponse>) => {
    const frame = `event: status\ndata: ${JSON.stringify(snapshot())}\n\n`;
    for (const response of targets) response.write(frame);
  };

  app.get('/status/snapshot', async () => snapshot());

  app.get('/status/events', (request, reply) => {
    reply.hijack();
    const response = reply.raw;
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    // A viewer that loses the feed reconnects after this long (EventSource default is ~3 s).
    response.write('retry: 1000\n\n');
    viewers.add(response);
    push([response]);
    if (timer === undefined) {
      timer = setInterval(() => push(viewers), STATUS_PUSH_MS);
      timer.unref();
    }
    request.raw.on('close', () => {
      viewers.delete(response);
      if (viewers.size === 0) {
        clearInterval(timer);
        timer = undefined;
      }
    });
  });

  app.addHook('preClose', async () => {
    clearInterval(timer);
    timer = undefined;
    for (const response of viewers) response.end();
    viewers.clear();
  });
}
