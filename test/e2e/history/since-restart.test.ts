/**
 * `since` after a crash: a relay in its own process records a book a live client receives, is
 * killed with SIGKILL and started again on the same `--data-dir`; a `since` from before the
 * record's start, asked of the restarted relay, answers with the very messages the live client
 * received (the same text: seq, epoch, data, checksum), losing at most the flush window before the
 * kill, then the restarted relay's own epoch from its first snapshot, then live, with no gap and no
 * duplicate; its `history` says the record starts later than asked. A `replay` of the same range, at
 * "max" and at speed 10, gives back the same messages, the hole before the restart marked.
 */
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { ChildRelay } from '../../support/cluster/child-relay.ts';
import { FLUSH_WINDOW_MS, useCrashRecording } from '../../support/crash-recording.ts';
import { TextClient } from '../../support/replay-client.ts';
import { waitFor } from '../../support/wait-for.ts';

const crash = useCrashRecording(48, 'history-since-restart-');
const { recordingRelay } = crash;

interface Received {
  text: string;
  type: string;
  epoch: string;
  seq: number;
  at: number;
}

/** Subscribes to one full book (with `since`, if given) and keeps the text of every message, with when it came. */
async function book(relay: ChildRelay, market: string, since?: string) {
  const socket = new WebSocket(`${relay.url.replace('http', 'ws')}/v1/ws`, { perMessageDeflate: false });
  const received: Received[] = [];
  const answers: Record<string, unknown>[] = [];
  socket.on('message', (data) => {
    const text = data.toString();
    const message = JSON.parse(text) as { type: string; epoch: string; seq: number };
    if (message.type === 'snapshot' || message.type === 'update')
      received.push({ text, type: message.type, epoch: message.epoch, seq: message.seq, at: Date.now() });
    else answers.push(message);
  });
  await new Promise((resolve) => socket.once('open', resolve));
  socket.send(JSON.stringify({ op: 'subscribe', id: 1, channel: 'book', markets: [market], since }));
  return { received, answers, close: () => socket.close() };
}

/** The message without its `replay` field, as text: what was sent live. */
function withoutReplay(text: string): string {
  const { replay: _id, ...message } = JSON.parse(text) as Record<string, unknown>;
  return JSON.stringify(message);
}

describe('since and replay from a record that outlived a SIGKILL', () => {
  it('answers with what the live client received, then the new epoch, then live; replay alike', async () => {
    const market = crash.sim().market.activeMarketIds()[0]!;
    const askedFrom = new Date(Date.now() - 1_000).toISOString();
    const first = await recordingRelay();
    const live = await book(first, market);
    await waitFor('a few seconds of a changing book', () => live.received.length >= 20, {
      timeoutMs: 15_000,
    });
    // Recorded by the flush timer alone for a few windows, then the relay is killed outright.
    const startedAt = Date.now();
    await waitFor('a few flush windows more', () => Date.now() - startedAt > 3 * FLUSH_WINDOW_MS);
    const killedAt = Date.now();
    await first.stop('SIGKILL');
    live.close();

    const second = await recordingRelay();
    const late = await book(second, market, askedFrom);
    const lastLive = live.received.at(-1)!;
    await waitFor(
      'the new epoch live',
      () => late.received.filter((message) => message.epoch !== lastLive.epoch).length >= 5,
      { timeoutMs: 15_000 },
    );
    const subscribed = late.answers.find((answer) => answer.type === 'subscribed');
    expect(subscribed).toMatchObject({ since: askedFrom, history: { complete: false } });
    expect(subscribed?.history).toEqual({ from: JSON.parse(live.received[0]!.text).rts, complete: false });

    const before = late.received.filter((message) => message.epoch === lastLive.epoch);
    // A prefix of what the live client received, each message as it was sent...
    expect(before.map((message) => message.text)).toEqual(
      live.received.slice(0, before.length).map((message) => message.text),
    );
    // ...missing at most what arrived within the flush window before the kill.
    const surely = live.received.filter((message) => message.at < killedAt - 2 * FLUSH_WINDOW_MS);
    expect(before.length).toBeGreaterThanOrEqual(surely.length);
    // Then the restarted relay's epoch from its first snapshot, each seq once, in order.
    const after = late.received.slice(before.length);
    expect(after[0]?.type).toBe('snapshot');
    for (let i = 1; i < after.length; i += 1) {
      const message = after[i]!;
      if (message.type === 'update') expect(message.seq).toBe(after[i - 1]!.seq + 1);
      else expect(message.seq).toBeGreaterThan(after[i - 1]!.seq);
    }
    late.close();

    // The same range replayed: the record before the kill as the live client received it, the hole
    // the kill left marked, then the restarted relay's messages as the since client received them.
    const rtsOf = (message: Received) => (JSON.parse(message.text) as { rts: string }).rts;
    const to = new Date(Date.parse(rtsOf(after.at(-1)!)) + 1).toISOString();
    const expected = [...before, ...after.filter((message) => rtsOf(message) < to)].map(
      (message) => message.text,
    );
    const reader = await TextClient.connect(second);
    for (const [id, speed] of [
      ['max', 'max'],
      ['ten', 10],
    ] as const) {
      reader.send({ op: 'replay', id, channel: 'book', markets: [market], from: askedFrom, to, speed });
      const done = await reader.answer('replayed', id, 15_000);
      const replayed = reader.stream(id).map(({ text }) => withoutReplay(text));
      expect(replayed, String(speed)).toEqual(expected);
      expect(done.messages).toBe(expected.length);
      const gaps = reader.of('replay_gap', id).map(({ message }) => message);
      expect(gaps, String(speed)).toEqual([
        expect.objectContaining({ from: askedFrom, to: rtsOf(before[0]!) }),
        expect.objectContaining({
          reason: 'epoch_changed',
          from: rtsOf(before.at(-1)!),
          to: rtsOf(after[0]!),
        }),
      ]);
    }
    reader.close();
  });
});
