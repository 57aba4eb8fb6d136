/**
 * @module http/quick-start
 * What `market-relay serve` prints for a newcomer once it listens (issue 6): the status page's URL and
 * a ready-to-paste command (curl on the relay's SSE) that prints a live market's book. Plain text for the terminal, on
 * stderr, so the JSON log on stdout stays one object per line. While upstream does not list its
 * markets, why not (issue 35: a newcomer reads the terminal, not the JSON log), once per cause.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { depthChannel } from '../relay/channels/relay-registry.ts';
import { UpstreamError, UpstreamNetworkError } from '../upstream/errors.ts';

/** How often the market listing is asked again while upstream does not answer it. */
const RETRY_MS = 5_000;

export interface QuickStartSource {
  url: string;
  /** Where the status page is when the operator endpoints have their own port. */
  operatorUrl?: string | undefined;
  upstreamUrl: string;
  client: MarketLister;
  /** Set when clients need a key; the command then carries a placeholder, never a real key. */
  apiKeys?: readonly string[] | undefined;
}

/** The one upstream call made here (UpstreamClient's). */
interface MarketLister {
  markets(
    query: { limit: number; sortBy: 'volume'; statusFilter: 'active' },
    init?: { signal: AbortSignal },
  ): Promise<{ markets: readonly { market_id: string; title: string }[] }>;
}

export interface QuickStartOutput {
  write: (text: string) => void;
  /** Ends the retries (the relay shutting down). */
  signal?: AbortSignal | undefined;
  retryMs?: number | undefined;
}

/**
 * Writes the status page's URL, then the client command as soon as upstream lists a market. Until
 * it does: where to connect, and each new cause of the failure (`upstream URL: connection
 * refused; retrying`), the listing retried every `retryMs`. Resolves once printed or aborted.
 */
export async function printQuickStart(
  { url, operatorUrl, upstreamUrl, client, apiKeys }: QuickStartSource,
  { write, signal, retryMs = RETRY_MS }: QuickStartOutput,
): Promise<void> {
  write(`market-relay status page: ${operatorUrl ?? url}/\n`);
  const needsKey = apiKeys !== undefined;
  const socket = `${url.replace(/^http/, 'ws')}/v1/ws${needsKey ? '?token=$API_KEY' : ''}`;
  const upstream = shownUrl(upstreamUrl);
  let lastCause: string | undefined;
  for (;;) {
    try {
      const { markets } = await client.markets(
        { limit: 1, sortBy: 'volume', statusFilter: 'active' },
        signal === undefined ? undefined : { signal },
      );
      if (lastCause !== undefined) write(`upstream ${upstream} answers now\n`);
      const market = markets[0];
      if (market !== undefined) {
        write(commandLines(url, needsKey, market.market_id, market.title));
      }
      return;
    } catch (error) {
      if (signal?.aborted) return;
      if (lastCause === undefined) {
        write(`connect a client to ${socket} (upstream has not listed its markets yet)\n`);
      }
      const cause = upstreamCause(error);
      if (cause !== lastCause) write(`upstream ${upstream}: ${cause}; retrying\n`);
      lastCause = cause;
    }
    try {
      await delay(retryMs, undefined, { signal });
    } catch {
      return;
    }
  }
}

function commandLines(url: string, needsKey: boolean, marketId: string, title: string): string {
  const query = new URLSearchParams({ channel: depthChannel, markets: marketId, depth: '10' });
  const lines = [`watch a live book (${title}) for 30 s:`];
  if (needsKey) lines.push('  export API_KEY=<one of the --api-keys>');
  // The relay's Server-Sent Events with curl: nothing to download first, and each event printed as
  // it comes (-N), to a terminal or a pipe alike. Double quotes, so that the shell expands $API_KEY.
  const key = needsKey ? ' -H "Authorization: Bearer $API_KEY"' : '';
  lines.push(`  curl -N --max-time 30${key} '${url}/v1/sse?${query}'`);
  return `${lines.join('\n')}\n`;
}

/** The upstream URL without user info, query or fragment, which may hold credentials. */
function shownUrl(upstreamUrl: string): string {
  try {
    const parsed = new URL(upstreamUrl);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/$/, '')}`;
  } catch {
    return upstreamUrl;
  }
}

/** Socket error codes a newcomer meets, in words. */
const NETWORK_CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** Why a call failed, in a few words: a socket error's name, else the error's own message. */
function upstreamCause(error: unknown): string {
  if (error instanceof UpstreamNetworkError) {
    const code = socketErrorCode(error.cause);
    if (code !== undefined) return NETWORK_CAUSES[code] ?? code;
  }
  if (error instanceof UpstreamError) {
    const prefix = `${error.endpoint}: `;
    return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/** The `code` of an error or of one it was caused by (the HTTP client wraps the socket's error). */
function socketErrorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; depth < 4; depth++) {
    if (typeof current !== 'object' || current === null) return undefined;
    if ('code' in current && typeof current.code === 'string') return current.code;
    current = 'cause' in current ? current.cause : undefined;
  }
  return undefined;
}
