/**
 * @module relay/channels/rest/codec
 * The `rest` channel's codec (protocol.md "`rest` data"): a public GET path's body, diffed as JSON
 * Patch (./json-patch-diff.ts, bounded in depth and work: past the bounds the whole body is sent),
 * with a checksum, and never an update larger than the snapshot it replaces.
 */
import { crc32 } from 'node:zlib';
import { restChecksum } from '../../../../packages/protocol/src/protocol/json-patch.ts';
import type { ChannelData } from '../../../../packages/protocol/src/protocol/messages.ts';
import { type StreamCodec, sendWhole } from '../relay-definition.ts';
import { diffJson } from './json-patch-diff.ts';

type RestData = ChannelData['rest'];

export const restCodec: StreamCodec<RestData['snapshot'], RestData['update']> = {
  diff: (prev, next) => {
    const patch = diffJson(prev, next);
    if (patch === undefined) return sendWhole;
    return patch.length === 0 ? null : patch;
  },
  checksum: (state) => restChecksum(state, crc32),
  noUpdateLargerThanSnapshot: true,
};
