/**
 * @module ws/frame-parser
 * Client frame -> validated request, or the reason it is a `bad_request` (protocol.md "Error
 * codes"). Pure: never throws, whatever the bytes.
 */
import type { RawData } from 'ws';
import { MAX_REQUEST_ID_LENGTH } from '../../packages/protocol/src/protocol/limits.ts';
import type { ClientRequest, RequestId } from '../../packages/protocol/src/protocol/messages.ts';
import { clientRequest, issueCode, withStreamIds } from '../../packages/protocol/src/protocol/requests.ts';

export type ParsedFrame =
  | { ok: true; request: ClientRequest }
  | { ok: false; message: string; id: RequestId | undefined; code?: 'path_not_public' };

const ops = new Set(['subscribe', 'unsubscribe', 'ping', 'update', 'list', 'replay', 'replay_stop']);

export function parseClientFrame(data: RawData, isBinary: boolean): ParsedFrame {
  if (isBinary)
    return { ok: false, message: 'binary frames are not accepted: send JSON text', id: undefined };
  const text = (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)).toString(
    'utf8',
  );
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, message: 'frame is not JSON', id: undefined };
  }
  // Echo the client's id even on a bad request when it is usable, so it can match the error.
  const id = echoableId(json);
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { ok: false, message: 'frame must be a JSON object', id };
  }
  const op = (json as { op?: unknown }).op;
  if (typeof op !== 'string' || !ops.has(op)) {
    return { ok: false, message: `unknown op ${JSON.stringify(op ?? null)}`, id };
  }
  const result = clientRequest.safeParse(withStreamIds(json));
  if (!result.success) {
    const issue = result.error.issues[0];
    const path = issue?.path.length ? `${issue.path.join('.')}: ` : '';
    const message = `${path}${issue?.message ?? 'invalid request'}`;
    return issueCode(issue) === 'path_not_public'
      ? { ok: false, message, id, code: 'path_not_public' }
      : { ok: false, message, id };
  }
  return { ok: true, request: result.data };
}

function echoableId(json: unknown): RequestId | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const id = (json as { id?: unknown }).id;
  if (typeof id === 'string' && id.length <= MAX_REQUEST_ID_LENGTH) return id;
  if (typeof id === 'number' && Number.isInteger(id)) return id;
  return undefined;
}
