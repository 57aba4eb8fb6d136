/**
 * 20 connections flooding requests from one address against a real relay with the shipped limits,
 * from a process of their own (test/support/flood-relay.ts), while a well-behaved client keeps every
 * stream `live` and its largest gap within twice its baseline. Each flood gets one answer per second,
 * not one per frame, and each is closed with 4429 (a closed flooder reconnects at once).
 */
import { describe, expect, it } from 'vitest';
import { closeCodes } from '../../../packages/protocol/src/protocol/messages.ts';
import { mostReplies, useFloodRelay } from '../../support/flood-relay.ts';

describe('floods from one address', () => {
  const relay = useFloodRelay();

  it('20 connections flooding from one address', async () => {
    const flooded = () => relay.closedWith.filter((code) => code === closeCodes.requestFlood).length;
    const report = await relay.underFlood(20, true, () => flooded() >= 20);
    expect(flooded()).toBeGreaterThanOrEqual(20);
    expect(report.repliesReceived).toBeLessThan(mostReplies(report));
  });
});
