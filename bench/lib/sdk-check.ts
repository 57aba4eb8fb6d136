/**
 * @module bench/lib/sdk-check
 * One client SDK (`market-relay/client`) subscriber riding along a measured relay run, in the
 * runner's process (never the server's or the generator's, so it costs the measured figures
 * nothing): it keeps every book from snapshot + updates, checks seq and checksums, and counts any
 * resync. Under load a correct relay gives it zero.
 */
import { connect } from '../../src/client/node.ts';
import type { BookDepth } from '../../src/protocol/messages.ts';

export interface SdkCheckResult {
  streams: number;
  updates: number;
  resyncs: number;
}

export interface SdkCheck {
  result(): SdkCheckResult;
  close(): Promise<void>;
}

export function startSdkCheck(
  url: string,
  markets: readonly string[],
  depth: BookDepth,
  encoding: 'compact' | 'json' = 'compact',
): SdkCheck {
  const client = connect(url, { encoding });
  const counts = { updates: 0, resyncs: 0 };
  for (const market of markets) {
    const book = client.subscribeBook(market, { depth });
    book.on('update', () => {
      counts.updates += 1;
    });
    book.on('resync', () => {
      counts.resyncs += 1;
    });
  }
  return {
    result: () => ({ streams: markets.length, ...counts }),
    close: () => client.close(),
  };
}
