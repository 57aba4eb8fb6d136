/**
 * @module test/upstream/content-encoding
 * Compressed answers: the client asks for `gzip, br`, decodes what comes compressed (asked or not),
 * counts the bytes as received, and reports a body it cannot decode or parse as what it is
 * (`decode_error`, `invalid_json`), never as a schema change; a redirect is not followed and says
 * where it points.
 */
import { brotliCompressSync, constants, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { UpstreamClient, type UpstreamRequestEvent } from '../../src/upstream/client.ts';
import {
  decodeBody,
  MAX_DECODED_BYTES,
  SYNC_MAX_DECODED_BYTES,
} from '../../src/upstream/content-encoding.ts';
import {
  publicReason,
  UpstreamDecodeError,
  UpstreamHttpError,
  UpstreamInvalidJsonError,
} from '../../src/upstream/errors.ts';
import { type ScriptedServer, startScriptedServer } from './scripted-server.ts';

const health = {
  status: 'ok',
  timestamp: '2026-11-27T12:00:00.000Z',
  services: { database: true, message_queue: true, settlement: true },
};
const text = JSON.stringify(health);

let server: ScriptedServer | undefined;
let client: UpstreamClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = server = undefined;
});

async function answering(
  status: number,
  body: Buffer | string,
  headers: Record<string, string> = {},
): Promise<{ client: UpstreamClient; events: UpstreamRequestEvent[] }> {
  server = await startScriptedServer((_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body);
  });
  client = new UpstreamClient({ baseUrl: server.url, retries: 0 });
  const events: UpstreamRequestEvent[] = [];
  client.events.on('request', (event) => events.push(event));
  return { client, events };
}

describe('compressed upstream answers', () => {
  it.each([
    ['gzip', gzipSync(text)],
    ['x-gzip', gzipSync(text)],
    ['br', brotliCompressSync(text)],
    ['deflate', deflateSync(text)],
    ['deflate', deflateRawSync(text)],
    ['gzip, br', brotliCompressSync(gzipSync(text))],
    ['identity', Buffer.from(text)],
  ])('asks for gzip and br, and decodes a %s body, counting the bytes received', async (coding, body) => {
    const { client, events } = await answering(200, body, { 'content-encoding': coding });
    await expect(client.health()).resolves.toEqual(health);
    expect(server?.requests[0]?.headers['accept-encoding']).toBe('gzip, br');
    expect(events).toMatchObject([{ outcome: 'ok', bytes: body.length }]);
  });

  it('decodes the REST front pass-through and the rest channel body too', async () => {
    const { client } = await answering(200, gzipSync(text), { 'content-encoding': 'gzip' });
    const forwarded = await client.forward({ endpoint: 'GET /health', method: 'GET', path: '/health' });
    expect(forwarded).toEqual({ status: 200, text });
  });

  it.each([
    ['a corrupt gzip body', 'gzip', Buffer.from('not gzip at all')],
    ['a truncated br body', 'br', brotliCompressSync(text).subarray(0, 10)],
    ['an unknown coding', 'zstd', Buffer.from(text)],
  ])('reports %s as a decode_error, not a schema_error', async (_case, coding, body) => {
    const { client, events } = await answering(200, body, { 'content-encoding': coding });
    const error = await client.health().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamDecodeError);
    expect(publicReason(error)).toBe('upstream sent an undecodable response');
    expect(events.map((event) => event.outcome)).toEqual(['decode_error']);
  });

  it('reports an HTML page where JSON belongs as invalid_json', async () => {
    const page = gzipSync('<!doctype html><html><body>Bad gateway</body></html>');
    const { client, events } = await answering(200, page, { 'content-encoding': 'gzip' });
    const error = await client.health().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamInvalidJsonError);
    expect((error as Error).message).toContain('<!doctype html>');
    expect(publicReason(error)).toBe('upstream sent a response that is not JSON');
    expect(events.map((event) => event.outcome)).toEqual(['invalid_json']);
  });

  it('does not follow a redirect: an http_error naming where it points, "upstream misconfigured"', async () => {
    const { client, events } = await answering(301, '', { location: 'https://elsewhere.example/health' });
    const error = await client.health().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect((error as Error).message).toBe(
      'GET /health: HTTP 301: redirect to https://elsewhere.example/health',
    );
    expect(publicReason(error)).toBe('upstream misconfigured');
    expect(events).toMatchObject([{ outcome: 'http_error', status: 301 }]);
    expect(server?.requests).toHaveLength(1);
  });
});

describe('decodeBody', () => {
  /** What `decodeBody` gave, and whether it gave it before returning. */
  function decode(body: Buffer, coding: string): { atOnce: boolean; result: Promise<Buffer | string> } {
    let atOnce = false;
    let returned = false;
    const result = new Promise<Buffer | string>((resolve) =>
      decodeBody(body, coding, (decoded) => {
        atOnce = !returned;
        resolve(decoded);
      }),
    );
    returned = true;
    return { atOnce, result };
  }

  it.each([
    ['gzip', gzipSync(text)],
    ['br', brotliCompressSync(text)],
    ['deflate', deflateRawSync(text)],
    ['gzip, br', brotliCompressSync(gzipSync(text))],
  ])(
    'decodes a small %s body at once, without a round trip through the thread pool',
    async (coding, body) => {
      const { atOnce, result } = decode(body, coding);
      expect(atOnce).toBe(true);
      expect((await result).toString()).toBe(text);
    },
  );

  it('decodes a body larger than the event loop decodes at once on the thread pool, and refuses one past the bound', async () => {
    const large = JSON.stringify({ data: 'x'.repeat(SYNC_MAX_DECODED_BYTES) });
    const pooled = decode(gzipSync(large), 'gzip');
    expect(pooled.atOnce).toBe(false);
    expect((await pooled.result).toString()).toBe(large);
    const bomb = brotliCompressSync(Buffer.alloc(MAX_DECODED_BYTES + 1), {
      params: { [constants.BROTLI_PARAM_QUALITY]: 1 },
    });
    expect(await decode(bomb, 'br').result).toMatch(/^br body cannot be decoded/);
  });
});
