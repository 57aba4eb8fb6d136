/**
 * @module relay/channels/markets/codec
 * The `markets` channel's codec (protocol.md "`markets` data"): the catalogue keyed by market,
 * diffed record by record (./diff.ts), with no checksum.
 */
import type { MarketsData, MarketsUpdateData } from '../../../../packages/protocol/src/protocol/messages.ts';
import type { StreamCodec } from '../relay-definition.ts';
import { diffMarkets } from './diff.ts';

export const marketsCodec: StreamCodec<MarketsData, MarketsUpdateData> = { diff: diffMarkets };
