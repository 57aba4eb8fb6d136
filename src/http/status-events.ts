/**
 * @module http/status-events
 * The status page's live feed: `GET /status/events` (Server-Sent Events, one `status` event with the
 * whole snapshot at once and then every second) and `GET /status/snapshot` (the same document once,
 * for scripts). One timer serves every viewer and runs only while someone watches; on shutdown every
 * feed is ended first, so that open pages never hold the HTTP server open.
 */
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { StatusSnapshot } from '../observability/status-snapshot.ts';

export const STATUS_PUSH_MS = 1_000;

export function registerStatusEvents(app: FastifyInstance, snapshot: () => StatusSnapshot): void {
  const viewers = new Set<PassThrough>();
  let timer: NodeJS.Timeout | undefined;

  const push = (targets: Iterable<PassThrough>) => {
    const frame = `event: status\ndata: ${JSON.stringify(snapshot())}\n\n`;
    for (const feed of targets) feed.write(frame);
  };

  app.get('/status/snapshot', async () => snapshot());

  app.get('/status/events', (request, reply) => {
    const feed = new PassThrough();
    // A viewer that loses the feed reconnects after this long (EventSource default is ~3 s).
    feed.write('retry: 1000\n\n');
    viewers.add(feed);
    push([feed]);
    if (timer === undefined) {
      timer = setInterval(() => push(viewers), STATUS_PUSH_MS);
      timer.unref();
    }
    request.raw.socket.once('close', () => {
      viewers.delete(feed);
      feed.end();
      if (viewers.size === 0) {
        clearInterval(timer);
        timer = undefined;
      }
    });
    return reply.type('text/event-stream; charset=utf-8').header('cache-control', 'no-cache').send(feed);
  });

  app.addHook('preClose', async () => {
    clearInterval(timer);
    timer = undefined;
    for (const feed of viewers) feed.end();
    viewers.clear();
  });
}
