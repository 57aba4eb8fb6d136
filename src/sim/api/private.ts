/**
 * @module sim/api/private
 * The private endpoints (docs/upstream.md "Private endpoints"): the user profile,
 * order placement and cancellation, and the signed developer interface. Their shapes are not shown
 * upstream and the simulator has no accounts, so: no bearer token, 401; any bearer token, 403.
 */
import { refusal, type SimRequest, type SimResponse } from './http.ts';

function isPrivate(path: string): boolean {
  return (
    path === '/api/user' ||
    path.startsWith('/api/user/') ||
    path === '/api/developer' ||
    path.startsWith('/api/developer/') ||
    path === '/clob/orders' ||
    path.startsWith('/clob/orders/')
  );
}

export function privateEndpointAnswer(request: SimRequest): SimResponse | undefined {
  if (!isPrivate(request.path)) return undefined;
  const authorization = request.headers.authorization ?? '';
  if (!/^Bearer\s+\S+/i.test(authorization)) {
    return refusal(401, 'authentication required: Authorization: Bearer <token>', {
      'www-authenticate': 'Bearer',
    });
  }
  return refusal(403, 'this token may not use this endpoint (the simulator has no accounts)');
}
