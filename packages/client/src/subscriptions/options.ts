/**
 * @module client/subscriptions/options
 * A subscription's options as `subscribe…` and `update` take them (docs/protocol.md
 * "Per-subscription options"): a value the relay would refuse throws at once, as a bad id does, so
 * that it cannot spoil the batched request it would share with other streams.
 */
import { channelDefinitions, type DefinedChannel } from '../../../protocol/src/channels/registry.ts';
import {
  isThreshold,
  MAX_INTERVAL_MS,
  MIN_INTERVAL_MS,
  thresholdExpected,
} from '../../../protocol/src/protocol/messages.ts';

/** A stream's pace as `subscribe…` takes it; a value the relay would refuse throws, as a bad id does. */
export function checkedInterval(interval: number | undefined): number | undefined {
  if (interval === undefined) return undefined;
  if (!Number.isInteger(interval) || interval < MIN_INTERVAL_MS || interval > MAX_INTERVAL_MS)
    throw new TypeError(
      `interval: expected a whole number of ms from ${MIN_INTERVAL_MS} to ${MAX_INTERVAL_MS}`,
    );
  return interval;
}

/** A `price` threshold as `subscribePrice` takes it; a value the relay would refuse throws. */
export function checkedThreshold(threshold: string | undefined): string | undefined {
  if (threshold === undefined) return undefined;
  if (!isThreshold(threshold)) throw new TypeError(`threshold: ${thresholdExpected}`);
  return threshold;
}

/**
 * A `since` of a stream (its id) as the `subscribe…` method of a channel that serves history takes
 * it (checked by the channel's definition, channels/definition.ts `history`); a value the relay
 * would refuse now throws.
 */
export function checkedSince(
  channel: DefinedChannel,
  streamId: string,
  since: string | Date | undefined,
): string | undefined {
  if (since === undefined) return undefined;
  const history = channelDefinitions[channel].history;
  if (history === undefined) throw new TypeError(`since: the ${channel} channel serves no history`);
  const text = since instanceof Date ? since.toISOString() : since;
  const checked = history.check(text, Date.now(), [streamId]);
  if (!checked.ok) throw new TypeError(checked.message);
  return text;
}
