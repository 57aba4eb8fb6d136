/**
 * @module http/rest-front/public-paths
 * The upstream paths the REST front answers: exactly the public endpoints of the upstream client's
 * table (docs/upstream.md), nothing else. Private paths (`/api/user/*`, `/auth/*`,
 * `/api/developer/*`, CLOB order management) are not in the table, so no route exists for them
 * and they never reach upstream. Upstream's `/health` is left out: `/health` is the relay's own.
 */
import { endpoints } from '../../upstream/client.ts';

export interface PublicRoute {
  method: 'GET' | 'POST';
  /** Route template in fastify's syntax (`:name` parameters), as upstream spells it. */
  path: string;
}

export const publicRoutes: readonly PublicRoute[] = Object.values(endpoints)
  .map(({ method, path }) => ({ method, path }))
  .filter((route) => route.path !== '/health');
