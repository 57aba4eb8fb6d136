/**
 * @module relay/channels/rest/rest-target
 * The `rest` channel's target (docs/protocol.md "`rest` data"): one of upstream's public GET paths,
 * in its canonical spelling (protocol/rest-paths.ts), asked once per poll for every subscriber of
 * any spelling of it. The state is the body exactly as upstream served it, parsed without a schema
 * so every field keeps upstream's type; relay/channels/rest/json-patch-diff.ts turns two bodies into an
 * update. A refusal of the path's id (a user, a market; relay/poll/not-found.ts) ends the stream.
 * A body beyond what a stream holds (nested too deep, too large: relay/channels/rest/json-bounds.ts) is
 * refused as an invalid response: the poll fails and the stream goes stale, the others untouched.
 */
import { z } from 'zod';
import type { JsonValue } from '../../../../packages/protocol/src/protocol/messages.ts';
import { canonicalRestPath } from '../../../../packages/protocol/src/protocol/rest-paths.ts';
import { UpstreamSchemaError } from '../../../upstream/errors.ts';
import type { PollContext } from '../../poll/poll-target.ts';
import type { TargetTiming } from '../../poll/scheduler.ts';
import { StreamTarget, type StreamTargetChannel } from '../../poll/stream-target.ts';
import { beyondBounds, type JsonBounds } from './json-bounds.ts';
import { MAX_DIFF_DEPTH } from './json-patch-diff.ts';

/** Any JSON body: what a lease holder shares is checked to be JSON, and nothing more. */
const anyBody = z.json();

/**
 * What a `rest` stream holds at most (docs/protocol.md "`rest` data"): as deep as its diff
 * descends, and 8 MiB of JSON, so a stream's state, its snapshot and its resume ring stay bounded.
 */
export const restBodyBounds: JsonBounds = { maxDepth: MAX_DIFF_DEPTH, maxLength: 8 * 1024 * 1024 };

export class RestTarget extends StreamTarget<'rest', JsonValue> {
  protected readonly schema = anyBody as z.ZodType<JsonValue>;

  constructor(path: string, timing: TargetTiming, context: PollContext) {
    super('rest', path, timing, context);
  }

  protected async ask(): Promise<JsonValue> {
    // The registry only holds paths canonicalStreamId accepted, so this never fails.
    const path = canonicalRestPath(this.streamId);
    if (!path.ok) throw new Error(`not a public path: ${this.streamId}`);
    const body = (await this.source.publicBody(path.value)) as JsonValue;
    const beyond = beyondBounds(body, restBodyBounds);
    if (beyond !== undefined)
      throw new UpstreamSchemaError(`GET ${path.value.template}`, [{ path: '', message: beyond }]);
    return body;
  }

  protected stateOf(body: JsonValue): JsonValue {
    return body;
  }

  /** A body has no time every resource shares: the receive time. */
  protected tsOf(): undefined {
    return undefined;
  }
}

/** The `rest` channel's streams, one target per public GET path. */
export const restTargets: StreamTargetChannel = {
  channel: 'rest',
  create: (id, timing, context) => new RestTarget(id, timing, context),
};
