/**
 * @module http/quick-start
 * What `market-relay serve` prints for a newcomer once it listens (issue 6): the status page's URL and
 * a ready-to-paste client command subscribing to a live market. Plain text for the terminal, on
 * stderr, so the JSON log on stdout stays one object per line.
 */
import type { UpstreamClient } from '../upstream/client.ts';

export interface QuickStartSource {
  url: string;
  /** Where the status page is when the operator endpoints have their own port. */
  operatorUrl?: string | undefined;
  client: UpstreamClient;
  /** Set when clients need a key; the command then carries a placeholder, never a real key. */
  apiKeys?: readonly string[] | undefined;
}

export async function quickStartText({
  url,
  operatorUrl,
  client,
  apiKeys,
}: QuickStartSource): Promise<string> {
  const lines = [`market-relay status page: ${operatorUrl ?? url}/`];
  const needsKey = apiKeys !== undefined;
  const socket = `${url.replace(/^http/, 'ws')}/v1/ws${needsKey ? '?token=$API_KEY' : ''}`;
  // Double quotes, so that the shell expands $API_KEY; single ones keep the URL literal otherwise.
  const quotedSocket = needsKey ? `"${socket}"` : `'${socket}'`;
  try {
    const { markets } = await client.markets({ limit: 1, sortBy: 'volume', statusFilter: 'active' });
    const market = markets[0];
    if (market !== undefined) {
      const subscribe = JSON.stringify({
        op: 'subscribe',
        channel: 'book',
        markets: [market.market_id],
        depth: 10,
      });
      lines.push(`watch a live book (${market.title}) for 30 s:`);
      if (needsKey) lines.push('  export API_KEY=<one of the --api-keys>');
      lines.push(`  npx wscat -c ${quotedSocket} -x '${subscribe}' -w 30`);
    }
  } catch {
    // Upstream not answering yet: the status page's picker will show markets once it does.
    lines.push(`connect a client to ${socket} (upstream has not listed its markets yet)`);
  }
  return `${lines.join('\n')}\n`;
}
