/**
 * @module relay/channels/market/codec
 * The `market` channel's codec (protocol.md "`market` data"): a market's detail record as upstream
 * sent it, diffed field by field (./diff.ts), with no checksum.
 */
import type { MarketData, MarketUpdateData } from '../../../../packages/protocol/src/protocol/messages.ts';
import type { StreamCodec } from '../relay-definition.ts';
import { diffMarket } from './diff.ts';

export const marketCodec: StreamCodec<MarketData, MarketUpdateData> = { diff: diffMarket };
