/**
 * @module bench/lib/sdk-check
 * One client SDK (`market-relay/client`) subscriber riding along a measured relay run, in the
 * runner's process (never the server's or the generator's, so it costs the measured figures
 * nothing): it keeps every book (or `rest` body) from snapshot + updates, checks seq and checksums, and counts any
 * resync. Under load a correct relay gives it zero. Scenario 7 has it offer the encoding and
 * permessage-deflate of the clients it rides along with, so that it makes the relay build no form
 * of a message those clients do not already need, and the many-client fan-out (scenario 9) has it
 * read JSON without deflate for the same reason; elsewhere it reads JSON with deflate offered, as
 * the SDK did before the compact encoding, so that earlier figures stay comparable.
 */
import WebSocket from 'ws';
import { connect } from '../../packages/client/src/node.ts';
import type { BookDepth } from '../../packages/protocol/src/protocol/messages.ts';

/** Books of these markets at one depth, or `rest` streams of these paths. */
export type SdkStreams = { markets: readonly string[]; depth: BookDepth } | { paths: readonly string[] };

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
  streams: SdkStreams,
  encoding: 'compact' | 'json' = 'json',
  deflate = true,
): SdkCheck {
  const WebSocketOfTheRun = class extends WebSocket {
    constructor(address: string, protocols?: string[]) {
      super(address, protocols, { perMessageDeflate: deflate });
    }
  };
  const client = connect(url, { encoding, WebSocket: WebSocketOfTheRun });
  const counts = { updates: 0, resyncs: 0 };
  const subscriptions =
    'paths' in streams
      ? streams.paths.map((path) => client.subscribeRest(path))
      : streams.markets.map((market) => client.subscribeBook(market, { depth: streams.depth }));
  for (const subscription of subscriptions) {
    subscription.on('update', () => {
      counts.updates += 1;
    });
    subscription.on('resync', () => {
      counts.resyncs += 1;
    });
  }
  return {
    result: () => ({ streams: subscriptions.length, ...counts }),
    close: () => client.close(),
  };
}
