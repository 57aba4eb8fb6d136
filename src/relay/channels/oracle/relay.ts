/**
 * @module relay/channels/oracle/relay
 * The `oracle` channel's server part: one upstream request per feed and poll, `ts` the feed's
 * publish time; an update only when the publish time advanced.
 */
import type { OracleData } from '../../../../packages/protocol/src/channels/oracle/oracle.ts';
import { type TokenPriceResponse, tokenPriceResponse } from '../../../upstream/schemas.ts';
import type { RelayChannel } from '../relay-definition.ts';

/** The upstream call the channel polls with. */
export interface OracleUpstream {
  tokenPrice(feedId: string): Promise<TokenPriceResponse>;
}

/** The whole new record, only when its publish time advanced (an older or equal one says nothing). */
export function diffOracle(prev: OracleData, next: OracleData): OracleData | null {
  return next.publish_time > prev.publish_time ? next : null;
}

export const oracleRelay: RelayChannel<OracleUpstream, OracleData, OracleData> = {
  codec: { diff: diffOracle },
  polled: {
    schema: tokenPriceResponse,
    ask: (upstream, feed) => upstream.tokenPrice(feed),
    stateOf: ({ feed_id, price, raw_price, expo, publish_time }: TokenPriceResponse) => ({
      feed_id,
      price,
      raw_price,
      expo,
      publish_time,
    }),
    tsOf: (response: TokenPriceResponse) => {
      const time = new Date(response.publish_time * 1000);
      return Number.isNaN(time.getTime()) ? undefined : time.toISOString();
    },
  },
};
