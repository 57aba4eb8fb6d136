/**
 * @module http/status-events
 * The status page's live feed: `GET /status/events` (Server-Sent Events, one `status` event with the
 * whole snapshot at once and then every second) and `GET /status/snapshot` (the same document once,
 * for scripts). One timer serves every viewer and runs only while someone watches; on shutdown every
 * feed is ended first, so that open pages never hold the HTTP server open.
 *
 * Bounded (docs/operations.md "Operator endpoints"): at most `maxViewers` feeds at once (more get
 * 503), and a viewer whose unsent backlog passes `viewerBufferBytes` is not read from any more: it is
 * dropped, so a page that stops reading costs one bounded buffer, never a growing one.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { StatusSnapshot } from '../observability/status-snapshot.ts';

export interface StatusFeedLimits {
  /** How often every viewer gets a fresh snapshot (1 s; tests make it faster). */
  pushMs: number;
  /** Feeds open at once; one more is answered 503. */
  maxViewers: number;
  /** Unsent bytes a viewer may have queued before it is dropped. */
  viewerBufferBytes: number;
}

export interface StatusFeed {
  readonly viewers: number;
  /** Viewers dropped for not reading, since start. */
  readonly dropped: number;
}

export function registerStatusEvents(
  app: FastifyInstance,
  snapshot: () => StatusSnapshot,
  limits: StatusFeedLimits,
): StatusFeed {
  const viewers = new Set<ServerResponse>();
  let timer: NodeJS.Timeout | undefined;
  let dropped = 0;

  const remove = (viewer: ServerResponse) => {
    if (!viewers.delete(viewer)) return;
    if (viewers.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };
  const push = (targets: Iterable<ServerResponse>) => {
    const frame = `event: status\ndata: ${JSON.stringify(snapshot())}\n\n`;
    for (const viewer of targets) {
      // Checked before writing, so a viewer holds at most the limit plus one frame.
      if (viewer.writableLength > limits.viewerBufferBytes) {
        dropped += 1;
        app.log.warn(
          { event: 'status_viewer_dropped', bufferedBytes: viewer.writableLength },
          'status feed viewer dropped: not reading',
        );
        remove(viewer);
        viewer.destroy();
        continue;
      }
      viewer.write(frame);
    }
  };

  app.get('/status/snapshot', async () => snapshot());

  app.get('/status/events', (request, reply) => {
    if (viewers.size >= limits.maxViewers) {
      return reply
        .code(503)
        .header('retry-after', '10')
        .send({ error: 'too_many_viewers', message: 'too many status feed viewers; retry later' });
    }
    // Written straight to the socket, not through a stream fastify would buffer without bound.
    reply.hijack();
    const viewer = reply.raw;
    viewer.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
    });
    // A viewer that loses the feed reconnects after this long (EventSource default is ~3 s).
    viewer.write('retry: 1000\n\n');
    viewers.add(viewer);
    push([viewer]);
    if (timer === undefined) {
      timer = setInterval(() => push(viewers), limits.pushMs);
      timer.unref();
    }
    request.raw.socket.once('close', () => remove(viewer));
  });

  app.addHook('preClose', async () => {
    clearInterval(timer);
    timer = undefined;
    for (const viewer of viewers) viewer.end();
    viewers.clear();
  });

  return {
    get viewers() {
      return viewers.size;
    },
    get dropped() {
      return dropped;
    },
  };
}
