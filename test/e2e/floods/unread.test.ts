/**
 * One connection flooding requests and never reading its answers, against a real relay with the
 * shipped limits, from a process of its own (test/support/flood-relay.ts), while a well-behaved
 * client keeps every stream `live` and its largest gap within twice its baseline. The relay closes
 * the flood with 4429 and reads no more of it.
 */
import { describe, expect, it } from 'vitest';
import { closeCodes } from '../../../packages/protocol/src/protocol/messages.ts';
import { useFloodRelay } from '../../support/flood-relay.ts';
import { waitFor } from '../../support/wait-for.ts';

describe('a flood that never reads', () => {
  const relay = useFloodRelay();

  it('one connection flooding and never reading: closed with 4429, not read any more', async () => {
    const report = await relay.underFlood(1, false);
    expect(report.framesSent).toBeGreaterThan(1_000);
    await waitFor('the relay to close it with 4429', () =>
      relay.closedWith.includes(closeCodes.requestFlood),
    );
  });
});
