/**
 * One connection flooding requests against a real relay with the shipped limits, from a process of
 * its own (test/support/flood-relay.ts), while a well-behaved client keeps every stream `live` and
 * its largest gap within twice its baseline. The mechanism is checked by counts: the flood gets one
 * answer per second, not one per frame, and is closed with 4429 as it persists. Figures (CPU, ping)
 * are in `npm run soak` (docs/reliability.md).
 */
import { describe, expect, it } from 'vitest';
import { closeCodes } from '../../../packages/protocol/src/protocol/messages.ts';
import { mostReplies, useFloodRelay } from '../../support/flood-relay.ts';

describe('a flood from one connection', () => {
  const relay = useFloodRelay();

  it('one connection flooding requests: one answer per second, then closed with 4429', async () => {
    // Flooded until the relay closes it: on a busy machine the flood may need longer than the
    // attack's usual window to persist past the limit.
    const closedForFlood = () => relay.closedWith.includes(closeCodes.requestFlood);
    const report = await relay.underFlood(1, true, closedForFlood);
    expect(report.framesSent).toBeGreaterThan(1_000);
    // At most the burst, the rate and one refusal per second of each connection: never one per frame.
    expect(report.repliesReceived).toBeLessThan(mostReplies(report));
    expect(closedForFlood()).toBe(true);
  });
});
