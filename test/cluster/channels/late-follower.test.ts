/**
 * A relay that starts following a quiet book from the state stored in Redis (docs/protocol.md:
 * `ts` and `rts` belong to the record a message shows): its first snapshot is the holder's state
 * at the stored seq with the times of the poll that produced it, not of a later poll that only
 * confirmed it, so it is the same text as the holder's snapshot of that seq.
 */
import { describe, expect, it } from 'vitest';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { useRelayProcesses } from '../../support/cluster/relay-processes.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.skipIf(!redisAvailable())('a relay following a quiet book late', () => {
  const cluster = useRelayProcesses({ relayArgs: ['--confirm-ms=100'] });

  it('sends the snapshot of the stored seq at that seq’s times', async () => {
    const market = cluster.sim.market.marketIds()[0]!;
    const [holder, follower] = await Promise.all([cluster.inProcessRelay(), cluster.inProcessRelay()]);
    const first = await ProtocolClient.connect(holder.url);
    cluster.clients.push(first);
    await first.request({ op: 'subscribe', channel: 'book', markets: [market] });
    // Polls that found the book unchanged since its snapshot, each written to Redis by the holder.
    await waitFor('two confirmations at the holder', () => first.of('confirmed').length >= 2);
    const late = await ProtocolClient.connect(follower.url);
    cluster.clients.push(late);
    await late.request({ op: 'subscribe', channel: 'book', markets: [market] });
    const joined = await waitFor('the late snapshot', () => late.of('snapshot')[0]);
    const snapshot = first.of('snapshot')[0]!;
    expect(first.of('update')).toEqual([]);
    expect(joined).toEqual(snapshot);
  });
});
