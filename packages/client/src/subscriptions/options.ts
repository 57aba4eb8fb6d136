/**
 * @module client/subscriptions/options
 * A subscription's options as `subscribe…` and `update` take them (docs/protocol.md
 * "Per-subscription options"): a value the relay would refuse throws at once, as a bad id does, so
 * that it cannot spoil the batched request it would share with other streams.
 */
import { channelDefinitions, isDefinedChannel } from '../../../protocol/src/channels/registry.ts';
import {
  type Channel,
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

/** A whole ISO 8601 time with its zone, as `since` and a replay's range take it. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A time as `since`, `replay` and `history` take it (an ISO 8601 string with its zone, or a Date),
 * as the ISO text sent; anything else throws a TypeError naming `what`.
 */
export function checkedTime(what: string, time: string | Date): string {
  const text = time instanceof Date ? time.toISOString() : time;
  if (typeof text !== 'string' || !ISO_TIME.test(text) || Number.isNaN(Date.parse(text)))
    throw new TypeError(
      `${what}: ${JSON.stringify(text)} is not an ISO 8601 time with its zone (such as 2026-06-01T12:00:00Z)`,
    );
  return text;
}

/**
 * A `since` of a stream (its id) as a `subscribe…` method takes it (docs/protocol.md "History and
 * replay"): on every channel a time, not ahead of now (a recording relay answers it from its record,
 * on `trades` and `candles` too, past what upstream keeps; how far back its record reaches only the
 * relay knows, and says); on a channel whose definition reads its own history (`trades`, `candles`:
 * channels/definition.ts `history`) also what that definition takes (a trade's `activity_id`). A
 * value no relay would take throws.
 */
export function checkedSince(
  channel: Channel,
  streamId: string,
  since: string | Date | undefined,
): string | undefined {
  if (since === undefined) return undefined;
  const history = isDefinedChannel(channel) ? channelDefinitions[channel].history : undefined;
  if (history !== undefined) {
    const text = since instanceof Date ? since.toISOString() : since;
    const checked = history.check(text, Date.now(), [streamId]);
    if (checked.ok) return text;
    if (typeof text !== 'string' || !ISO_TIME.test(text)) throw new TypeError(checked.message);
  }
  const text = checkedTime('since', since);
  if (Date.parse(text) > Date.now()) throw new TypeError(`since: ${text} is in the future`);
  return text;
}
