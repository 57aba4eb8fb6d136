/**
 * The `candles` channel's poll target as the relay makes it (relay/poll/stream-targets.ts: the
 * kept target over the channel's keeper), under the name the target's tests drive it alone by.
 */
import { relayChannels } from '../../../src/relay/channels/relay-registry.ts';
import { KeptTarget } from '../../../src/relay/poll/kept-target.ts';
import type { PollContext } from '../../../src/relay/poll/poll-target.ts';
import type { TargetTiming } from '../../../src/relay/poll/scheduler.ts';

export class CandlesTarget extends KeptTarget<'candles'> {
  constructor(streamId: string, timing: TargetTiming, context: PollContext) {
    super('candles', relayChannels.candles.kept!, streamId, timing, context);
  }
}
