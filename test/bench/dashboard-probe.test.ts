/**
 * The dashboard benchmark's premise (bench/scenarios/dashboard.ts): before an arm's clients connect,
 * one probe `subscribe` tells whether the relay applies the arm's option. A relay that knows it
 * echoes it in `subscribed`; one that does not either refuses it (`bad_request`) or drops the
 * unknown field and answers `subscribed` without it, which the probe must let the scenario see.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeSubscribe } from '../../bench/lib/subscribe-probe.ts';
import { type Harness, startHarness } from '../support/harness.ts';

describe('the dashboard benchmark’s option probe', () => {
  let harness: Harness;
  let url: string;
  let market: string;
  beforeAll(async () => {
    harness = await startHarness();
    url = `${harness.relay.url.replace(/^http/, 'ws')}/v1/ws`;
    market = harness.sim.market.activeMarketIds()[0]!;
  });
  afterAll(async () => {
    await harness.stop();
  });

  it('sees an option the relay applies echoed in `subscribed`', async () => {
    const answer = await probeSubscribe(url, {
      channel: 'book',
      markets: [market],
      depth: 10,
      interval: 1000,
    });
    expect(answer.type).toBe('subscribed');
    expect(answer.type === 'subscribed' && answer.echo.interval).toBe(1000);
  });

  it('sees a refused option as the relay’s error', async () => {
    const answer = await probeSubscribe(url, { channel: 'price', markets: [market], interval: 99 });
    expect(answer).toMatchObject({ type: 'error', code: 'bad_request' });
  });

  it('sees a field the relay does not know left out of `subscribed`', async () => {
    const answer = await probeSubscribe(url, { channel: 'price', markets: [market], unheardOf: '0.01' });
    expect(answer.type).toBe('subscribed');
    expect(answer.type === 'subscribed' && 'unheardOf' in answer.echo).toBe(false);
  });
});
