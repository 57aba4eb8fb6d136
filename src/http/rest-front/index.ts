/**
 * @module http/rest-front
 * The relay as a drop-in for upstream's public REST interface (docs/operations.md "REST front"):
 * each public path answers with upstream's own status and body (the CLOB price batch from the
 * relay's live price streams when it has them all), otherwise through a short-lived cache that
 * also coalesces concurrent identical requests into one upstream request, each in a slot of the
 * polling budget (docs/scheduler.md "One-off requests") and inside the upstream client's caps. Plus `GET /v1/book/:market?depth=&group=`, the live book with `epoch`, `seq` and
 * `checksum` for clients that poll the relay.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { groupExpected, offeredGroup } from '../../../packages/protocol/src/protocol/group.ts';
import { MARKET_ID_PATTERN } from '../../../packages/protocol/src/protocol/limits.ts';
import { bookDepths } from '../../../packages/protocol/src/protocol/messages.ts';
import type { MarketAdmission } from '../../relay/admission/market.ts';
import { depthChannel } from '../../relay/channels/relay-registry.ts';
import { OneOffRefusedError } from '../../relay/poll/dispatch-queues.ts';
import type { PollerPool } from '../../relay/poll/poller-pool.ts';
import { currentSnapshot } from '../../relay/session/current-snapshot.ts';
import type { StreamRegistry } from '../../relay/streams/registry.ts';
import type { UpstreamClient } from '../../upstream/client.ts';
import { CoalescingCache } from '../../upstream/coalescing-cache.ts';
import { RELAY_VIA } from '../../upstream/exchange.ts';
import { LIVE_PRICES_PATH, livePriceBatch } from './live-prices.ts';
import { publicRoutes } from './public-paths.ts';

export interface RestFrontOptions {
  client: UpstreamClient;
  /** Where each forwarded request waits for its slot of the upstream budget. */
  budget: Pick<PollerPool, 'runOneOff'>;
  registry: StreamRegistry;
  marketAdmission: MarketAdmission;
  /** How long an upstream answer is served again (ms). */
  cacheTtlMs: number;
  cacheCapacity: number;
  /** How long `/v1/book` waits for a stream nobody watched yet to get its first state. */
  firstStateTimeoutMs: number;
}

interface Answer {
  status: number;
  text: string;
}

export function registerRestFront(app: FastifyInstance, options: RestFrontOptions): void {
  const cache = new CoalescingCache<Answer>({ ttlMs: options.cacheTtlMs, capacity: options.cacheCapacity });

  for (const route of publicRoutes) {
    app.route({
      method: route.method,
      url: route.path,
      handler: async (request, reply) => {
        reply.header('via', RELAY_VIA);
        const [path = '/', search = ''] = (request.raw.url ?? '/').split('?', 2);
        const query = Object.fromEntries(new URLSearchParams(search));
        const body = route.method === 'POST' ? request.body : undefined;
        const live = route.path === LIVE_PRICES_PATH ? livePriceBatch(options.registry, body) : undefined;
        if (live !== undefined) return reply.type('application/json').send(live);
        const key = `${route.method} ${path}?${search} ${body === undefined ? '' : JSON.stringify(body)}`;
        try {
          const answer = await cache.get(key, () =>
            options.budget.runOneOff(
              () =>
                options.client.forward({
                  endpoint: `${route.method} ${route.path}`,
                  method: route.method,
                  path,
                  query,
                  body,
                }),
              // Waiting for a slot longer than upstream could take to answer helps nobody.
              AbortSignal.timeout(options.firstStateTimeoutMs),
            ),
          );
          return reply.code(answer.status).type('application/json').send(answer.text);
        } catch (error) {
          if (error instanceof OneOffRefusedError || isTimeout(error)) {
            return reply
              .code(503)
              .header('retry-after', '1')
              .send({ error: 'upstream_busy', message: 'the upstream budget is spent; retry later' });
          }
          return reply.code(502).send({
            error: 'upstream_unavailable',
            message: error instanceof Error ? error.message : 'upstream unavailable',
          });
        }
      },
    });
  }

  app.get('/v1/book/:market', (request, reply) => answerBook(request, reply, options));
}

async function answerBook(
  request: FastifyRequest,
  reply: FastifyReply,
  options: RestFrontOptions,
): Promise<FastifyReply> {
  const { market } = request.params as { market: string };
  const { depth: depthText, group: groupText } = request.query as { depth?: string; group?: string };
  if (!MARKET_ID_PATTERN.test(market)) return badRequest(reply, `market ${market} is not a UUID`);
  const depth =
    depthText === undefined || depthText === 'full' ? null : bookDepths.find((d) => String(d) === depthText);
  if (depth === undefined) return badRequest(reply, `depth must be ${bookDepths.join(', ')} or full`);
  const group = groupText === undefined ? undefined : offeredGroup(groupText);
  if (groupText !== undefined && group === undefined) return badRequest(reply, `group: ${groupExpected}`);
  const answer = await currentSnapshot(
    options.registry,
    options.marketAdmission,
    { channel: depthChannel, market: market.toLowerCase(), depth, ...(group === undefined ? {} : { group }) },
    options.firstStateTimeoutMs,
  );
  switch (answer.kind) {
    case 'snapshot':
      return reply.type('application/json').send(answer.frame.bytes);
    case 'unknown_market':
      return reply
        .code(404)
        .send({ error: 'unknown_market', message: `market ${market} does not exist upstream` });
    case 'unavailable':
      return reply.code(503).send({ error: 'upstream_unavailable', message: 'no state from upstream yet' });
  }
}

/** The wait for a budget slot ran out (AbortSignal.timeout's reason). */
function isTimeout(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'TimeoutError';
}

function badRequest(reply: FastifyReply, message: string): FastifyReply {
  return reply.code(400).send({ error: 'bad_request', message });
}
