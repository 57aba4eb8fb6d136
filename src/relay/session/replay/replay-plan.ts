/**
 * @module relay/session/replay/replay-plan
 * What a `replay` request asks for, checked against the clock and the record's retention before
 * anything is read (docs/protocol.md "Replay"): the streams' keys, the range in epoch milliseconds
 * and the pace. Pure: the request, `now` and the retention in, a plan or the documented error out.
 */

import { streamKey } from '../../../../packages/protocol/src/channels/stream-key.ts';
import { isChannel, isWildcard } from '../../../../packages/protocol/src/protocol/channels.ts';
import type { ReplayRequest, ReplaySpeed } from '../../../../packages/protocol/src/protocol/history.ts';
import type { Channel, ErrorCode, RequestId } from '../../../../packages/protocol/src/protocol/messages.ts';
import { hasDepths } from '../../channels/relay-registry.ts';

/** One replayed stream: its market (stream id) and the key its record is kept under. */
export interface ReplayedStream {
  market: string;
  key: string;
}

export interface ReplayPlan {
  id: RequestId;
  channel: Channel;
  streams: ReplayedStream[];
  /** Epoch milliseconds of `rts`, inclusive. */
  from: number;
  /** Epoch milliseconds of `rts`, exclusive. */
  to: number;
  speed: ReplaySpeed;
}

export type PlannedReplay = { ok: true; plan: ReplayPlan } | { ok: false; code: ErrorCode; message: string };

/**
 * The plan of `request` at `now`; `retentionMs` is how long the record keeps messages (undefined:
 * the relay records nothing). A `to` after `now` is read as `now`: a replay never waits for live.
 */
export function planReplay(
  request: ReplayRequest,
  now: number,
  retentionMs: number | undefined,
): PlannedReplay {
  const { channel } = request;
  if (!isChannel(channel))
    return { ok: false, code: 'unknown_channel', message: `unknown channel "${channel}"` };
  if (isWildcard(request.markets))
    return { ok: false, code: 'bad_request', message: 'a replay names its markets: "*" is for subscribe' };
  if (!hasDepths(channel) && (request.depth !== undefined || request.group !== undefined))
    return { ok: false, code: 'bad_request', message: 'depth and group apply to the book channel only' };
  if (retentionMs === undefined)
    return { ok: false, code: 'out_of_retention', message: 'this relay records no history (--history off)' };
  const from = Date.parse(request.from);
  const to = Math.min(request.to === undefined ? now : Date.parse(request.to), now);
  if (request.to !== undefined && Date.parse(request.to) <= from)
    return { ok: false, code: 'bad_request', message: 'from must be before to' };
  if (from >= to) return { ok: false, code: 'bad_request', message: 'from must be before now' };
  const keptSince = now - retentionMs;
  if (to <= keptSince)
    return {
      ok: false,
      code: 'out_of_retention',
      message: `the range ends before the retention window: records are kept from ${new Date(keptSince).toISOString()}`,
    };
  const depth = hasDepths(channel) ? (request.depth ?? null) : undefined;
  const markets = [...new Set(request.markets)];
  return {
    ok: true,
    plan: {
      id: request.id,
      channel,
      streams: markets.map((market) => ({ market, key: streamKey(channel, market, depth, request.group) })),
      from,
      to,
      speed: request.speed ?? 1,
    },
  };
}
