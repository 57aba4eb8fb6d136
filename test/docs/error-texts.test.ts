/**
 * The error examples of docs/protocol.md are what the relay sends: each documented example is
 * provoked on a live relay and compared field by field, message text included (limits that the
 * example states at their defaults are provoked with smaller configured limits, and the number in
 * the text follows the configuration).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { type Harness, startHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';
import { protocolDocPath } from './asyncapi-document.ts';

type Json = Record<string, unknown>;

const examples = [...readFileSync(protocolDocPath, 'utf8').matchAll(/```json\n([\s\S]*?)\n```/g)]
  .map((m) => JSON.parse(m[1] ?? '') as Json)
  .filter((message) => message.type === 'error');

/** Sends a request with the example's own id and waits for the error answering it. */
async function reply(client: ProtocolClient, request: Json): Promise<Json> {
  client.send(request);
  return waitFor('the error reply', () => client.of('error').find((message) => message.id === request.id));
}

function documented(code: string): Json {
  const example = examples.find((message) => message.code === code);
  if (example === undefined) throw new Error(`docs/protocol.md has no example of ${code}`);
  return example;
}

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

describe('documented error examples match the relay', () => {
  let harness: Harness;
  let client: ProtocolClient;
  beforeAll(async () => {
    harness = await startHarness({
      relay: { tuning: { connection: { maxStreams: 2, requestsPerSecond: 1, requestBurst: 12 } } },
    });
    client = await ProtocolClient.connect(harness.relay.url);
  });
  afterAll(async () => {
    await client.close();
    await harness.stop();
  });

  it('bad_request', async () => {
    const example = documented('bad_request');
    expect(await reply(client, { op: 'subscribe', id: example.id, channel: 'book', markets: [] })).toEqual(
      example,
    );
  });

  it('unknown_channel', async () => {
    const example = documented('unknown_channel');
    const [market] = harness.sim.market.marketIds();
    const request = { op: 'subscribe', id: example.id, channel: 'tickers', markets: [market] };
    expect(await reply(client, request)).toEqual(example);
  });

  it('unknown_market', async () => {
    const example = documented('unknown_market');
    await client.request({ op: 'subscribe', id: 'u', channel: 'book', markets: [UNKNOWN] });
    const error = await waitFor('the stream error', () =>
      client.of('error').find((message) => message.code === 'unknown_market'),
    );
    expect(error).toEqual(example);
    await client.request({ op: 'unsubscribe', id: 'v', channel: 'book', markets: [UNKNOWN] });
  });

  it('limit_exceeded', async () => {
    const example = documented('limit_exceeded');
    const markets = harness.sim.market.marketIds().slice(0, 3);
    expect(await reply(client, { op: 'subscribe', id: example.id, channel: 'book', markets })).toEqual({
      ...example,
      message: String(example.message).replace('1000', '2'),
    });
  });

  it('rate_limited', async () => {
    const example = documented('rate_limited');
    // A frame over the rate is not parsed, so the one error it gets carries no id.
    expect(example.id).toBeUndefined();
    const seen = client.of('error').length;
    for (let i = 0; i < 20; i++) client.send({ op: 'ping', id: `p${i}` });
    const refusal = await waitFor('the refusal', () =>
      client
        .of('error')
        .slice(seen)
        .find((message) => message.code === 'rate_limited'),
    );
    expect(refusal).toEqual({ ...example, message: String(example.message).replace('20', '1') });
  });
});
