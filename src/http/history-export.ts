/**
 * @module http/history-export
 * `GET /v1/history/<channel>?market=<id>&from=<ISO>&to=<ISO>&format=ndjson|parquet` (docs/history.md
 * "Export"): one stream's recorded messages, streamed. NDJSON is one message per line exactly as it
 * was sent; Parquet is the store's own file of the range, written to a temporary file and streamed
 * out. The same access rule as the other client paths (API key, origins); every bad input is a 400
 * with a JSON `{error, message}` and reads nothing.
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { streamKey } from '../../packages/protocol/src/channels/stream-key.ts';
import { groupExpected, offeredGroup } from '../../packages/protocol/src/protocol/group.ts';
import { bookDepths, type Channel, channels } from '../../packages/protocol/src/protocol/messages.ts';
import type { RecordReader } from '../history/recorder.ts';
import type { HistoryRange, HistoryStore } from '../history/store.ts';
import { type AccessPolicy, authorize } from '../relay/admission/access.ts';
import { hasDepths } from '../relay/channels/relay-registry.ts';
import { sentText } from '../relay/streams/recorded.ts';

/** NDJSON lines are written in chunks of about this many bytes. */
const CHUNK_BYTES = 64 * 1024;

export interface HistoryExportOptions {
  /** Undefined when the relay records nothing (`--history off`). */
  recorder: RecordReader | undefined;
  access: AccessPolicy;
  now?: () => number;
}

/** The export's query parameters (docs/history.md "Export"). */
interface Query {
  /** The stream id: a market UUID, a path, `all`. */
  market?: string;
  from?: string;
  to?: string;
  format?: string;
  depth?: string;
  group?: string;
}

export function registerHistoryExport(app: FastifyInstance, options: HistoryExportOptions): void {
  const now = options.now ?? Date.now;
  app.get('/v1/history/:channel', async (request: FastifyRequest, reply) => {
    const refusal = authorize(request.headers, new URL(request.url, 'http://relay'), options.access);
    if (refusal !== undefined)
      return reply.code(refusal.status).send({ error: refusal.error, message: refusal.message });
    const recorder = options.recorder;
    if (recorder === undefined)
      return reply
        .code(404)
        .send({ error: 'history_off', message: 'this relay records no history (--history off)' });
    const { channel } = request.params as { channel: string };
    const asked = readRequest(channel, request.query as Query, recorder.retention.maxAgeMs, now());
    if ('error' in asked) return reply.code(400).send(asked);
    // What is still in the recorder's buffer belongs to the answer too.
    await recorder.flush();
    try {
      return asked.format === 'parquet'
        ? await sendParquet(reply, recorder.store, asked.range)
        : reply
            .header('content-type', 'application/x-ndjson; charset=utf-8')
            .send(Readable.from(await startedChunks(ndjsonChunks(recorder.store, asked.range))));
    } catch (error) {
      // A store that cannot read the range (a file damaged inside) fails this request alone.
      return reply.code(500).send({
        error: 'internal',
        message: `the record could not be read: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
  });
}

/**
 * `chunks` with its first chunk already read, so that a store failing at the start of the read is
 * answered with a status; one failing later can only cut the answer short.
 */
async function startedChunks(chunks: AsyncGenerator<string>): Promise<AsyncGenerator<string>> {
  const first = await chunks.next();
  return (async function* () {
    if (first.done === true) return;
    yield first.value;
    yield* chunks;
  })();
}

type Asked = { range: HistoryRange; format: 'ndjson' | 'parquet' } | { error: string; message: string };

/** The request's stream, range and format, or the 400 it gets (docs/history.md "Errors"). */
function readRequest(channel: string, query: Query, retentionMs: number, now: number): Asked {
  if (!(channels as readonly string[]).includes(channel))
    return { error: 'unknown_channel', message: `no channel "${channel}": one of ${channels.join(', ')}` };
  const { market, format = 'ndjson' } = query;
  if (market === undefined || market === '')
    return {
      error: 'bad_request',
      message: 'market is required: the stream id (a market UUID, a path, all)',
    };
  if (format !== 'ndjson' && format !== 'parquet')
    return { error: 'bad_request', message: `format must be ndjson or parquet, got "${format}"` };
  const depth = bookDepth(channel as Channel, query.depth);
  if (depth === false)
    return {
      error: 'bad_request',
      message: `depth must be one of ${bookDepths.join(', ')} or full (book only)`,
    };
  const group = query.group === undefined ? undefined : offeredGroup(query.group);
  if (query.group !== undefined && (!hasDepths(channel) || group === undefined))
    return { error: 'bad_request', message: `group (book only): ${groupExpected}` };
  if (query.from === undefined)
    return { error: 'bad_request', message: 'from is required: an ISO 8601 time' };
  const from = isoTime(query.from);
  const to = query.to === undefined ? now : isoTime(query.to);
  if (from === undefined || to === undefined)
    return {
      error: 'bad_request',
      message: 'from and to must be ISO 8601 times such as 2026-12-01T10:00:00Z',
    };
  if (from >= to) return { error: 'bad_request', message: 'from must be before to' };
  const keptSince = now - retentionMs;
  if (to <= keptSince)
    return {
      error: 'out_of_retention',
      message: `the range ends before the retention window: records are kept from ${new Date(keptSince).toISOString()}`,
    };
  return { range: { stream: streamKey(channel, market, depth, group), from, to }, format };
}

/** A book's depth from the query (undefined: the full book; false: not a depth). */
function bookDepth(channel: Channel, text: string | undefined): number | null | undefined | false {
  if (text === undefined || text === 'full')
    return hasDepths(channel) ? null : text === undefined ? undefined : false;
  const depth = Number(text);
  return hasDepths(channel) && (bookDepths as readonly number[]).includes(depth) ? depth : false;
}

function isoTime(text: string): number | undefined {
  // A date-time with a zone: a bare date or local time would mean different instants to different readers.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

async function* ndjsonChunks(store: HistoryStore, range: HistoryRange): AsyncGenerator<string> {
  let chunk = '';
  for await (const record of store.read(range)) {
    chunk += `${sentText(record)}\n`;
    if (chunk.length >= CHUNK_BYTES) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk.length > 0) yield chunk;
}

async function sendParquet(
  reply: FastifyReply,
  store: HistoryStore,
  range: HistoryRange,
): Promise<FastifyReply> {
  const folder = await mkdtemp(path.join(tmpdir(), 'market-relay-export-'));
  const file = path.join(folder, 'history.parquet');
  try {
    await store.writeParquet(range, file);
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
  const body = createReadStream(file);
  body.on('close', () => void rm(folder, { recursive: true, force: true }));
  return reply
    .header('content-type', 'application/vnd.apache.parquet')
    .header('content-disposition', 'attachment; filename="history.parquet"')
    .send(body);
}
