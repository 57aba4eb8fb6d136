/**
 * The SDK's history against a real relay recording into a temporary folder (docs/client.md
 * "History: since, replay and the export"), its books changing every few milliseconds:
 * `client.replay()` of a recorded book gives, at every step, the book (levels and checksum) the live
 * client held after the message with the same seq, at "max" and at speed 10, starting from inside
 * the stream with the state at `from`; `subscribeBook` and `subscribePrice` with `since` stitch to
 * live with the SDK's own seq and checksum checks (no `resync`); `client.history()` gives the
 * messages the live client received; a relay with no record refuses each clearly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type RelayClient } from '../../../packages/client/src/node.ts';
import type { Relay } from '../../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import { startHarnessRelay } from '../../support/harness.ts';
import { recordingFolder, startRecordingRelay } from '../../support/replay-client.ts';
import { waitFor } from '../../support/wait-for.ts';

interface Step {
  epoch: string;
  seq: number;
  rts: string;
  /** The message as received. */
  message: unknown;
  /** The subscription's state after it. */
  state: unknown;
}

interface Watched {
  on(
    event: 'snapshot' | 'update',
    listener: (event: { message: Step['message']; state: unknown }) => void,
  ): unknown;
  on(event: 'resync', listener: (event: unknown) => void): unknown;
}

/** Every snapshot and update of `stream` with the state after it, and every resync. */
function watch(stream: Watched): { steps: Step[]; resyncs: unknown[] } {
  const steps: Step[] = [];
  const resyncs: unknown[] = [];
  const step = ({ message, state }: { message: unknown; state: unknown }) => {
    const { epoch, seq, rts } = message as Step;
    steps.push({ epoch, seq, rts, message: structuredClone(message), state: structuredClone(state) });
  };
  stream.on('snapshot', step);
  stream.on('update', step);
  stream.on('resync', (event) => resyncs.push(event));
  return { steps, resyncs };
}

const key = (step: { epoch: string; seq: number }) => `${step.epoch}:${step.seq}`;

let sim: SimulatorHandle;
let relay: Relay;
const folder = recordingFolder('sdk-history-');
const clients: RelayClient[] = [];

beforeAll(async () => {
  sim = await startSimulator({ markets: 2, seed: 47, tickMs: 20 });
  relay = await startRecordingRelay(sim, folder.dataDir);
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await relay?.close();
  await sim?.close();
  folder.remove();
});

function client(url = relay.url): RelayClient {
  const opened = connect(url, { encoding: 'json' });
  clients.push(opened);
  return opened;
}

describe('the SDK against a recording relay', () => {
  it('replays a book readable at every step, since stitches to live, history gives what was sent', async () => {
    const [market] = sim.market.activeMarketIds() as [string];
    const live = client();
    const book = watch(live.subscribeBook(market));
    const price = watch(live.subscribePrice(market));
    await waitFor('a changing book', () => book.steps.length >= 40 && price.steps.length >= 5, {
      timeoutMs: 8_000,
    });
    const sent = book.steps.slice();
    // `from` falls strictly between two live messages, inside the stream.
    const at = sent.findIndex(
      (step, i) => i >= 10 && i + 1 < sent.length && Date.parse(sent[i + 1]!.rts) > Date.parse(step.rts) + 1,
    );
    expect(at).toBeGreaterThanOrEqual(10);
    const from = new Date(Date.parse(sent[at]!.rts) + 1).toISOString();
    const to = new Date(Date.parse(sent.at(-1)!.rts) + 1).toISOString();
    const held = new Map(sent.map((step) => [key(step), step]));

    for (const speed of ['max', 10] as const) {
      const items = [];
      const replay = live.replay({ channel: 'book', markets: [market], from, to, speed });
      for await (const item of replay) items.push(item);
      expect(
        items.filter((item) => item.type !== 'message'),
        String(speed),
      ).toEqual([]);
      const steps = items.flatMap((item) => (item.type === 'message' ? [item] : []));
      expect(steps.map(({ message }) => key(message))).toEqual(sent.slice(at).map(key));
      expect(steps[0]!.message.type).toBe('snapshot');
      for (const { message, state } of steps) {
        const liveStep = held.get(key(message))!;
        expect(state).toEqual(liveStep.state);
        expect(message.checksum).toBe((liveStep.message as { checksum: number }).checksum);
      }
      expect(replay.result).toMatchObject({ messages: steps.length });
    }

    // since, on a book and a price: the state at the time, then on to live, checked by the SDK.
    const reader = client();
    const sinceBook = reader.subscribeBook(market, { since: from });
    const sincePrice = reader.subscribePrice(market, { since: from });
    const readBook = watch(sinceBook);
    const readPrice = watch(sincePrice);
    const caughtUp = (read: Step[], of: Step[]) =>
      read.length > 0 && of.length > 0 && key(read.at(-1)!) === key(of.at(-1)!);
    await waitFor(
      'since caught up with live',
      () => caughtUp(readBook.steps, book.steps) && caughtUp(readPrice.steps, price.steps),
      {
        timeoutMs: 8_000,
      },
    );
    for (const [read, liveSteps, stream] of [
      [readBook, book.steps, sinceBook],
      [readPrice, price.steps, sincePrice],
    ] as const) {
      expect(read.resyncs).toEqual([]);
      expect(stream.history).toEqual({ from, complete: true });
      const liveStates = new Map(liveSteps.map((step) => [key(step), step.state]));
      // The state at the time is that of the last message at or before it (docs/history.md).
      const first = liveSteps.findLastIndex((step) => Date.parse(step.rts) <= Date.parse(from));
      expect(read.steps[0]!.seq).toBe(liveSteps[first]!.seq);
      // Every step the live client took from there, no gap and no duplicate, each state the same.
      const seen = read.steps.map(key);
      expect(seen.slice(0, liveSteps.length - first)).toEqual(liveSteps.slice(first).map(key));
      for (const step of read.steps)
        if (liveStates.has(key(step))) expect(step.state).toEqual(liveStates.get(key(step)));
    }

    // The export: the book's messages as the live client received them.
    const exported = [];
    for await (const message of live.history({ channel: 'book', market, from: sent[0]!.rts, to }))
      exported.push(message);
    expect(exported).toEqual(sent.map((step) => step.message));
  });

  it('a relay that records nothing refuses since, replay and the export clearly', async () => {
    const [market] = sim.market.activeMarketIds() as [string];
    const plain = await startHarnessRelay(sim);
    try {
      const unrecorded = client(plain.url);
      const since = new Date(Date.now() - 60_000);
      const book = unrecorded.subscribeBook(market, { since });
      const errors: { code: string; message: string }[] = [];
      book.on('error', (error: { code: string; message: string }) => errors.push(error));
      await waitFor('the refusal', () => errors[0]);
      expect(errors[0]).toMatchObject({
        code: 'bad_request',
        message: expect.stringMatching(/records nothing/),
      });
      expect(book.status).toBe('closed');
      const replay = unrecorded.replay({ channel: 'book', markets: [market], from: since, speed: 'max' });
      await expect(
        (async () => {
          for await (const _ of replay);
        })(),
      ).rejects.toMatchObject({ code: 'out_of_retention', message: expect.stringMatching(/history off/) });
      await expect(
        (async () => {
          for await (const _ of unrecorded.history({ channel: 'book', market, from: since }));
        })(),
      ).rejects.toMatchObject({ code: 'history_refused', message: expect.stringMatching(/history_off/) });
    } finally {
      await plain.close();
    }
  });
});
