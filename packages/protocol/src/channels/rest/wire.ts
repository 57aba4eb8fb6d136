/**
 * @module channels/rest/wire
 * The `rest` channel's wire form (docs/protocol.md "`rest` data"), what the generic code asks of it
 * (channels/definition.ts `ChannelWire`): upstream's public GET paths as stream ids (named `path`
 * and `paths` on the wire), a checksum on every message, any body in a snapshot and a JSON Patch
 * in an update.
 */
import { isObject } from '../../util/field-checks.ts';
import type { ChannelWire } from '../definition.ts';

export const restWire: ChannelWire = {
  streamIds: { kind: 'path' },
  checksummed: true,
  dataProblem({ data, checksum }, snapshot) {
    if (!Number.isSafeInteger(checksum)) return 'checksum';
    if (snapshot) return data === undefined ? 'data' : undefined;
    const isOperation = (operation: unknown) =>
      isObject(operation) && typeof operation.op === 'string' && typeof operation.path === 'string';
    return Array.isArray(data) && data.every(isOperation) ? undefined : 'JSON Patch';
  },
};
