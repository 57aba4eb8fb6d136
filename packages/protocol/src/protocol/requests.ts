/**
 * @module protocol/requests
 * What clients send (protocol.md "Client -> relay") as zod schemas: the relay validates every
 * frame with them; each schema's output satisfies the request type declared in ./messages.ts. Limits come from
 * ./limits.ts, each channel's stream ids from ./channels.ts and the book depths from ./messages.ts,
 * so this module needs nothing else of the project.
 */
import { z } from 'zod';
import { PATHS_FIELD, STREAM_IDS_FIELD } from '../channels/definition.ts';
import { idsArePaths, idsField } from '../channels/registry.ts';
import { canonicalStreamId, isChannel, isWildcardChannel, WILDCARD, wildcardChannels } from './channels.ts';
import { groupExpected, offeredGroup } from './group.ts';
import type { ReplayRequest, ReplayStopRequest } from './history.ts';
import {
  MAX_INTERVAL_MS,
  MAX_MARKETS_PER_REQUEST,
  MAX_REQUEST_ID_LENGTH,
  MAX_STREAM_ID_LENGTH,
  MIN_INTERVAL_MS,
} from './limits.ts';
import {
  bookDepths,
  type ClientRequest,
  type ListRequest,
  type PingRequest,
  type SubscribeRequest,
  type UnsubscribeRequest,
  type UpdateRequest,
} from './messages.ts';
import { MAX_REST_PATH_LENGTH } from './rest-paths.ts';
import { isThreshold, shortestThreshold, thresholdExpected } from './threshold.ts';

const requestId = z.union([z.string().max(MAX_REQUEST_ID_LENGTH), z.number().int()]);
const resumePoint = z.object({ epoch: z.string().min(1).max(64), seq: z.number().int().nonnegative() });
/** Worded as docs/protocol.md's `bad_request` example, whichever bound is missed. */
const marketsExpected = `expected between 1 and ${MAX_MARKETS_PER_REQUEST} UUIDs`;
/** Checked against its channel below: what an id is depends on the channel. */
const streamId = z.string().max(Math.max(MAX_STREAM_ID_LENGTH, MAX_REST_PATH_LENGTH), 'not a stream id');

/**
 * A `rest` subscribe or unsubscribe names its streams `paths` (protocol.md "`rest` data"): read as
 * the `markets` every other channel names, before validation, so one schema checks both.
 */
export function withStreamIds(frame: unknown): unknown {
  if (typeof frame !== 'object' || frame === null || Array.isArray(frame)) return frame;
  const { paths, ...rest } = frame as { paths?: unknown; channel?: unknown; markets?: unknown };
  // Only a text names a channel; the schema refuses anything else (a client's object may not even
  // turn into one: JSON can give it its own `toString`).
  if (typeof rest.channel !== 'string' || !idsArePaths(rest.channel)) return frame;
  // `markets` on such a channel is refused (checkStreamIds), not read as its paths.
  if (rest.markets !== undefined) return { ...rest, misnamedPaths: true };
  return paths === undefined ? frame : { ...rest, markets: paths };
}

/** The error code an issue of a request's validation is answered with (`bad_request` unless it says). */
export function issueCode(issue: z.core.$ZodIssue | undefined): 'bad_request' | 'path_not_public' {
  return issue?.code === 'custom' && issue.params?.code === 'path_not_public'
    ? 'path_not_public'
    : 'bad_request';
}

/** Every depth named in the one message a bad depth gets, so the client learns what it may ask. */
const depthsExpected = `expected ${bookDepths.join(', ')}, "full" or null (the full book)`;
/** `"full"` is read as null, the full book's depth in every message. */
const bookDepth = z
  .union([...bookDepths.map((depth) => z.literal(depth)), z.literal('full'), z.null()], {
    error: depthsExpected,
  })
  .transform((depth) => (depth === 'full' ? null : depth));

/**
 * `channel` is any string here so that an unknown channel is answered `unknown_channel`, not
 * `bad_request` (protocol.md "Error codes").
 */
const intervalExpected = `expected a whole number of ms from ${MIN_INTERVAL_MS} to ${MAX_INTERVAL_MS}`;
/** At most one message per interval per stream (docs/protocol.md "Per-subscription options"). */
const interval = z
  .number({ error: intervalExpected })
  .int({ error: intervalExpected })
  .min(MIN_INTERVAL_MS, { error: intervalExpected })
  .max(MAX_INTERVAL_MS, { error: intervalExpected });

/**
 * The least move of best bid, best ask or midpoint a `price` message waits for (docs/protocol.md
 * "Per-subscription options"), in price units: a string, so it reaches the comparison exact.
 */
const threshold = z
  .string({ error: thresholdExpected })
  .refine(isThreshold, { error: thresholdExpected })
  .transform(shortestThreshold);

/**
 * A `book` subscription's group step (docs/protocol.md "Grouped books"): one of the offered steps,
 * in any decimal spelling, read as the offered one so that equal steps are one stream.
 */
const group = z.unknown().transform((value, context) => {
  const offered = offeredGroup(value);
  if (offered === undefined) {
    context.addIssue({ code: 'custom', message: groupExpected });
    return z.NEVER;
  }
  return offered as string;
});

/** The streams a subscribe or unsubscribe names: a channel, its stream ids and (book) depth and group. */
const streamSelection = {
  id: requestId.optional(),
  channel: z.string(),
  markets: z
    .array(streamId, { error: marketsExpected })
    .min(1, { error: marketsExpected })
    .max(MAX_MARKETS_PER_REQUEST, { error: marketsExpected }),
  depth: bookDepth.optional(),
  group: group.optional(),
  /** Set by withStreamIds: a `rest` request named its streams `markets`. */
  misnamedPaths: z.literal(true).optional(),
};

/**
 * Stream ids are compared in one spelling: market UUIDs and feed ids are case-insensitive, so a
 * client may send any case and the relay answers, streams and polls in lower case (one stream per
 * id). Ids of an unknown channel are left as sent: the answer is `unknown_channel`.
 */
function checkStreamIds(
  selection: {
    channel: string;
    markets: string[];
    resume?: Record<string, unknown>;
    misnamedPaths?: true;
    interval?: number | null;
    threshold?: string | null;
    since?: string;
  },
  context: z.RefinementCtx,
): void {
  const { channel } = selection;
  if (!isChannel(channel)) return;
  if (selection.misnamedPaths === true) {
    context.addIssue({
      code: 'custom',
      path: [STREAM_IDS_FIELD],
      message: `the ${channel} channel names its streams in "${PATHS_FIELD}", not "${STREAM_IDS_FIELD}"`,
    });
    return;
  }
  const field = idsField(channel);
  if (selection.markets.includes(WILDCARD)) {
    const issue = wildcardIssue(channel, selection.markets);
    if (issue !== undefined) context.addIssue({ code: 'custom', path: [field], message: issue });
    else
      for (const option of ['interval', 'threshold', 'since'] as const)
        if (selection[option] !== undefined)
          context.addIssue({
            code: 'custom',
            path: [option],
            message: 'applies to named markets only, not "*"',
          });
  } else {
    selection.markets.forEach((id, i) => {
      const checked = canonicalStreamId(channel, id);
      if (!checked.ok)
        context.addIssue({
          code: 'custom',
          path: [field, i],
          message: checked.message,
          ...(checked.code === undefined ? {} : { params: { code: checked.code } }),
        });
    });
  }
  for (const id of Object.keys(selection.resume ?? {})) {
    const checked = canonicalStreamId(channel, id);
    if (!checked.ok) context.addIssue({ code: 'custom', path: ['resume', id], message: checked.message });
  }
}

/** Why a selection naming `*` is refused, or undefined when it is a wildcard subscription. */
function wildcardIssue(channel: string, ids: readonly string[]): string | undefined {
  if (!isWildcardChannel(channel))
    return `"*" (every active market) applies to the ${wildcardChannels.join(', ')} channels only`;
  return ids.length === 1 ? undefined : '"*" stands alone: no other market beside it';
}

function canonicalId(channel: string, id: string): string {
  if (!isChannel(channel)) return id;
  const checked = canonicalStreamId(channel, id);
  return checked.ok ? checked.id : id;
}

export const subscribeRequest = z
  .object({
    op: z.literal('subscribe'),
    ...streamSelection,
    interval: interval.optional(),
    threshold: threshold.optional(),
    /** Checked with the channel and the clock (the channel's `history`, channels/definition.ts). */
    since: z.string({ error: 'expected an ISO 8601 time or an activity_id' }).optional(),
    resume: z.record(streamId, resumePoint).optional(),
  })
  .superRefine(checkStreamIds)
  .transform((request) => ({
    ...request,
    markets: request.markets.map((id) => canonicalId(request.channel, id)),
    ...(request.resume === undefined
      ? {}
      : {
          resume: Object.fromEntries(
            Object.entries(request.resume).map(([id, point]) => [canonicalId(request.channel, id), point]),
          ),
        }),
  })) satisfies z.ZodType<SubscribeRequest>;

export const unsubscribeRequest = z
  .object({ op: z.literal('unsubscribe'), ...streamSelection })
  .superRefine(checkStreamIds)
  .transform((request) => ({
    ...request,
    markets: request.markets.map((id) => canonicalId(request.channel, id)),
  })) satisfies z.ZodType<UnsubscribeRequest>;

export const updateRequest = z
  .object({
    op: z.literal('update'),
    ...streamSelection,
    from_depth: streamSelection.depth,
    group: group.nullable().optional(),
    from_group: group.nullable().optional(),
    interval: interval.nullable().optional(),
    threshold: threshold.nullable().optional(),
    // Read only to be refused: a history is a new snapshot, which a repeated `subscribe` asks for.
    since: z.unknown().optional(),
  })
  .superRefine((request, context) => {
    if (request.since !== undefined)
      context.addIssue({
        code: 'custom',
        path: ['since'],
        message:
          'is taken by subscribe, not update: subscribe again with "since" to resynchronise from that history',
      });
    checkStreamIds({ ...request, since: undefined }, context);
  })
  .transform(({ since: _refused, ...request }) => ({
    ...request,
    markets: request.markets.map((id) => canonicalId(request.channel, id)),
  })) satisfies z.ZodType<UpdateRequest>;

export const listRequest = z.object({
  op: z.literal('list'),
  id: requestId.optional(),
}) satisfies z.ZodType<ListRequest>;

export const pingRequest = z.object({
  op: z.literal('ping'),
  id: requestId.optional(),
}) satisfies z.ZodType<PingRequest>;

const isoTimeExpected = 'expected an ISO 8601 time with its zone, such as 2026-12-01T10:00:00Z';
/** A date-time with a zone: a bare date or local time would mean different instants to different readers. */
const isoTime = z
  .string({ error: isoTimeExpected })
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/, { error: isoTimeExpected })
  .refine((text) => !Number.isNaN(Date.parse(text)), { error: isoTimeExpected });
const speedExpected = 'expected a number above 0 (1 = the original pacing) or "max"';
const replaySpeed = z.union([z.literal('max'), z.number().positive().finite()], { error: speedExpected });

/**
 * `replay` (docs/protocol.md "Replay"): `id` is required, since it names every message of the
 * replay; the range is checked against the clock and the retention where it is run.
 */
export const replayRequest = z
  .object({
    op: z.literal('replay'),
    ...streamSelection,
    id: requestId,
    from: isoTime,
    to: isoTime.optional(),
    speed: replaySpeed.optional(),
  })
  .superRefine(checkStreamIds)
  .transform(({ misnamedPaths: _checked, ...request }) => ({
    ...request,
    markets: request.markets.map((id) => canonicalId(request.channel, id)),
  })) satisfies z.ZodType<ReplayRequest>;

export const replayStopRequest = z.object({
  op: z.literal('replay_stop'),
  id: requestId,
}) satisfies z.ZodType<ReplayStopRequest>;

export const clientRequest = z.discriminatedUnion('op', [
  subscribeRequest,
  unsubscribeRequest,
  pingRequest,
  updateRequest,
  listRequest,
  replayRequest,
  replayStopRequest,
]) satisfies z.ZodType<ClientRequest>;
