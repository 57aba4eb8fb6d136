/**
 * @module channels/stream-names
 * The names the wire gives stream ids, apart from any channel though two are spelt like one
 * (docs/protocol.md "Client -> relay"): a message names its stream in `market` and a selection its
 * streams in `markets`, or `path` and `paths` on a channel whose ids are paths; and a market's
 * UUID is the stream-id kind `market` (./definition.ts). Named once here, so that the channels'
 * own names stay the channels'.
 */

/** The field a stream message names its stream id in. */
export const STREAM_ID_FIELD = 'market';
/** The field a selection (subscribe, unsubscribe, subscribed ...) lists its stream ids in. */
export const STREAM_IDS_FIELD = 'markets';
/** {@link STREAM_ID_FIELD} on the wire, for a channel whose stream ids are paths. */
export const PATH_FIELD = 'path';
/** {@link STREAM_IDS_FIELD} on the wire, for a channel whose stream ids are paths. */
export const PATHS_FIELD = 'paths';
/** The stream-id kind whose ids are market UUIDs. */
export const MARKET_IDS = 'market';
