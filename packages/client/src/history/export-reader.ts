/**
 * @module client/history/export-reader
 * `relay.history(...)`: one stream's recorded messages from the relay's NDJSON export
 * (`GET /v1/history/<channel>`, docs/history.md "Export"), read as they stream in: the body is cut
 * into lines as its bytes arrive, each line read as the live path reads a frame, so that a range
 * of any length is held one chunk at a time. Needs only `fetch` and web streams (browsers, Node).
 */

import { STREAM_ID_FIELD } from '../../../protocol/src/channels/definition.ts';
import { hasDepths } from '../../../protocol/src/channels/registry.ts';
import { canonicalStreamId } from '../../../protocol/src/protocol/channels.ts';
import type { BookDepth, Channel, StreamMessage } from '../../../protocol/src/protocol/messages.ts';
import { decodeFrame } from '../connection/frames.ts';
import { RelayClientError } from '../events/client-error.ts';
import { streamDepth, streamGroup } from '../subscriptions/channels/book/subscription.ts';
import { checkedTime } from '../subscriptions/options.ts';

/** What `relay.history()` takes. */
export interface HistoryOptions {
  channel: Channel;
  /** The stream id as the channel's `subscribe` takes it. */
  market: string;
  /** ISO 8601 time (or Date), inclusive. */
  from: string | Date;
  /** Exclusive; default: now. */
  to?: string | Date;
  /** `book`: which depth's stream (default the full book). */
  depth?: BookDepth | 'full';
  /** `book`: which grouped stream. */
  group?: string;
  /** Stops the read (the iterator throws the signal's reason). */
  signal?: AbortSignal;
  /** Default: the global `fetch`. */
  fetch?: HistoryFetch;
}

/** What the export is asked: one stream's messages whose `rts` lies in [from, to). */
export interface HistoryQuery {
  channel: Channel;
  /** The stream id: a market UUID, a canonical path on `rest`, `all` on `probabilities`. */
  market: string;
  /** ISO 8601 text with its zone, inclusive. */
  from: string;
  /** Exclusive; absent: now. */
  to?: string | undefined;
  depth?: BookDepth | undefined;
  group?: string | undefined;
}

/** `fetch` as the reader calls it (the global one by default; injected in tests). */
export type HistoryFetch = (
  url: string,
  init: { headers: Record<string, string>; signal?: AbortSignal },
) => Promise<{
  ok: boolean;
  status: number;
  body: ReadableStream<Uint8Array> | null;
  text(): Promise<string>;
}>;

/** The export's query of `options`, checked as the relay checks it; a bad value throws a TypeError. */
export function historyQuery(options: HistoryOptions): HistoryQuery {
  const { channel } = options;
  const market = canonicalStreamId(channel, options.market);
  if (!market.ok) throw new TypeError(`${channel}: ${JSON.stringify(options.market)} is ${market.message}`);
  const from = checkedTime('from', options.from);
  const to = options.to === undefined ? undefined : checkedTime('to', options.to);
  if (to !== undefined && Date.parse(from) >= Date.parse(to))
    throw new TypeError(`from: ${from} is not before to: ${to}`);
  if (!hasDepths(channel) && (options.depth !== undefined || options.group !== undefined))
    throw new TypeError(`depth and group are a book's, not ${channel}'s`);
  return {
    channel,
    market: market.id,
    from,
    to,
    ...(hasDepths(channel) ? { depth: streamDepth(options.depth), group: streamGroup(options.group) } : {}),
  };
}

/** The export's URL on the HTTP origin of a relay's socket URL (`ws://host/v1/ws` -> `http://host/v1/history/book`). */
export function historyUrl(socketUrl: string, query: HistoryQuery): string {
  const url = new URL(socketUrl);
  url.protocol = url.protocol === 'wss:' || url.protocol === 'https:' ? 'https:' : 'http:';
  // A relay behind a path prefix keeps it: only the transport's own last part is replaced.
  const prefix = url.pathname.replace(/\/v1\/(ws|sse)\/?$/, '').replace(/\/$/, '');
  url.pathname = `${prefix}/v1/history/${encodeURIComponent(query.channel)}`;
  url.search = '';
  url.searchParams.set(STREAM_ID_FIELD, query.market);
  url.searchParams.set('from', query.from);
  if (query.to !== undefined) url.searchParams.set('to', query.to);
  if (query.depth !== undefined)
    url.searchParams.set('depth', query.depth === null ? 'full' : String(query.depth));
  if (query.group !== undefined) url.searchParams.set('group', query.group);
  url.searchParams.set('format', 'ndjson');
  return url.toString();
}

/**
 * The recorded messages of `url`, in order. A refusal (a 4xx with the relay's `{error, message}`)
 * throws `history_refused` naming the relay's code; a line that is not a stream message throws
 * `malformed_frame`.
 */
export async function* readHistory(
  fetchImpl: HistoryFetch,
  url: string,
  headers: Record<string, string>,
  signal?: AbortSignal,
): AsyncGenerator<StreamMessage, void, undefined> {
  const response = await fetchImpl(url, signal === undefined ? { headers } : { headers, signal });
  if (!response.ok || response.body === null) throw await refusal(response);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let pending = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      pending += done ? decoder.decode() : decoder.decode(value, { stream: true });
      const lines = pending.split('\n');
      pending = done ? '' : (lines.pop() ?? '');
      for (const line of lines) if (line.trim() !== '') yield message(line);
      if (done) return;
    }
  } finally {
    // Left early: the rest of the body is not read.
    await reader.cancel().catch(() => {});
  }
}

function message(line: string): StreamMessage {
  const decoded = decodeFrame(line);
  if (decoded.ok && (decoded.message?.type === 'snapshot' || decoded.message?.type === 'update'))
    return decoded.message;
  const reason = decoded.ok ? 'not a stream message' : decoded.reason;
  throw new RelayClientError('malformed_frame', `history line ${reason}: ${line.slice(0, 120)}`);
}

async function refusal(response: { status: number; text(): Promise<string> }): Promise<RelayClientError> {
  const body = await response.text().catch(() => '');
  let detail = body.slice(0, 200);
  try {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown };
    if (typeof parsed.error === 'string') detail = `${parsed.error}: ${String(parsed.message ?? '')}`;
  } catch {
    // Not the relay's JSON (a proxy's page): its first bytes say what it is.
  }
  return new RelayClientError('history_refused', `history export answered ${response.status}: ${detail}`);
}
