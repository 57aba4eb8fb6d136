/**
 * The per-address stream limits end to end (docs/operations.md "Isolation"): connections of one
 * client address share a bound on distinct `rest` paths, a subscribe past it is refused whole with
 * `limit_exceeded` carrying its id, and another address keeps its own count; made-up paths are
 * started at the address's unconfirmed rate, the rest refused `rate_limited` by name.
 */
import { describe, expect, it } from 'vitest';
import { defaultIsolationLimits } from '../../../src/relay/admission/market.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

const search = (i: number) => `/api/search?q=e2e-${i}`;

describe('per-address stream limits', () => {
  const { opened: clients, start } = useHarness();

  it('bounds the distinct rest paths of one address, whatever its connections, and not another', async () => {
    const { relay } = await start({
      relay: {
        isolation: {
          ...defaultIsolationLimits,
          maxRestPaths: 3,
          maxRestPathsPerAddress: 4,
          unconfirmedPathsPerSecondPerAddress: 1,
        },
      },
    });
    const connect = async (localAddress: string) => {
      const client = await ProtocolClient.connect(relay.url, { localAddress });
      clients.push(client);
      return client;
    };
    const [a, b] = [await connect('127.0.0.1'), await connect('127.0.0.1')];
    const neighbour = await connect('127.0.0.2');

    const tooMany = await a.request({ op: 'subscribe', channel: 'rest', paths: [1, 2, 3, 4].map(search) });
    expect(tooMany).toMatchObject({
      type: 'error',
      code: 'limit_exceeded',
      channel: 'rest',
      message: 'at most 3 rest paths per connection',
    });
    expect(await a.request({ op: 'subscribe', channel: 'rest', paths: [1, 2, 3].map(search) })).toMatchObject(
      {
        type: 'subscribed',
      },
    );
    // b shares one of a's paths (counted once) and adds one: four, the address's bound.
    expect(await b.request({ op: 'subscribe', channel: 'rest', paths: [1, 4].map(search) })).toMatchObject({
      type: 'subscribed',
    });
    const overAddress = await b.request({ op: 'subscribe', channel: 'rest', paths: [search(5)] });
    expect(overAddress).toMatchObject({
      code: 'limit_exceeded',
      message: 'at most 4 rest paths per client address',
    });
    expect(overAddress.id).toBeDefined();

    // Another address: its own count.
    const paths = [100, 101, 102].map(search);
    expect(await neighbour.request({ op: 'subscribe', channel: 'rest', paths })).toMatchObject({
      type: 'subscribed',
    });
    await waitFor('the neighbour’s snapshots', () =>
      paths.every((path) => neighbour.of('snapshot').some((message) => message.path === path)),
    );

    // Unsubscribing frees the address's count.
    await a.request({ op: 'unsubscribe', channel: 'rest', paths: [search(2)] });
    expect(await b.request({ op: 'subscribe', channel: 'rest', paths: [search(5)] })).toMatchObject({
      type: 'subscribed',
    });
  });

  it('starts paths upstream has not answered at the address’s rate, refusing the rest by name', async () => {
    const { relay } = await start({
      relay: {
        isolation: { ...defaultIsolationLimits, unconfirmedPathsPerSecondPerAddress: 1 },
      },
    });
    const client = await ProtocolClient.connect(relay.url, { localAddress: '127.0.0.3' });
    clients.push(client);
    const paths = Array.from({ length: 12 }, (_, i) => search(200 + i));
    expect(await client.request({ op: 'subscribe', channel: 'rest', paths })).toMatchObject({
      type: 'subscribed',
    });
    // A burst of ten seconds' worth: ten paths start, two are refused.
    const refused = await waitFor('two refusals', () => {
      const errors = client.of('error').filter((error) => error.code === 'rate_limited');
      return errors.length === 2 ? errors : undefined;
    });
    expect(refused.map((error) => error.path ?? error.market)).toEqual([search(210), search(211)]);
    expect(refused.every((error) => error.id === undefined)).toBe(true);
  });
});
