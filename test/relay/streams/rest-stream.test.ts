/**
 * A `rest` stream's bodies cost their own stream only (docs/protocol.md "`rest` data"): `seq`
 * advances only with a message sent, a body the diff gives up on or whose patch would outgrow it
 * goes out as a snapshot with the next `seq`, and resume goes on from that snapshot.
 */
import { describe, expect, it } from 'vitest';
import { applyPatch, restChecksum } from '../../../packages/protocol/src/protocol/json-patch.ts';
import type { JsonValue, PatchOperation } from '../../../packages/protocol/src/protocol/messages.ts';
import { codecs, type StreamCodec } from '../../../src/relay/channels/codecs.ts';
import type { Frame } from '../../../src/relay/streams/frame.ts';
import { type AnyStream, Stream, type StreamSubscriber } from '../../../src/relay/streams/stream.ts';

const path = '/api/rewards/leaderboard';
const ts = '2026-01-01T00:00:00.000Z';

interface Message {
  type: string;
  seq: number;
  data: JsonValue;
  checksum: number;
}

/** A client of the docs: a snapshot replaces the body, an update is applied; every checksum checked. */
class Client implements StreamSubscriber {
  readonly messages: Message[] = [];
  body: JsonValue | undefined;
  deliver(_stream: AnyStream, frame: Frame): void {
    this.receive(frame);
  }
  notify(): void {}
  ended(): void {}
  receive(frame: Frame): void {
    const message = JSON.parse(frame.text) as Message;
    this.messages.push(message);
    this.body =
      message.type === 'snapshot'
        ? message.data
        : applyPatch(this.body as JsonValue, message.data as unknown as PatchOperation[]);
    expect(restChecksum(this.body)).toBe(message.checksum);
  }
}

function restStream(codec: StreamCodec<JsonValue, PatchOperation[]> = codecs.rest, ring = 10) {
  const stream = new Stream<JsonValue, PatchOperation[]>({ channel: 'rest', market: path }, codec, ring);
  const client = new Client();
  stream.subscribers.add(client);
  return { stream, client };
}

const records = (count: number, seed: number) =>
  Array.from({ length: count }, (_, i) => ({ id: `r${(i * seed) % count}`, rank: i }));

describe('a rest stream', () => {
  it('spends no seq on a body whose message cannot be made: the next body is seq + 1', () => {
    const refusing: StreamCodec<JsonValue, PatchOperation[]> = {
      ...codecs.rest,
      checksum: (state) => {
        if (JSON.stringify(state).includes('poison'))
          throw new RangeError('Maximum call stack size exceeded');
        return restChecksum(state);
      },
    };
    const { stream, client } = restStream(refusing);
    const body = (a: JsonValue): JsonValue => ({ a, text: 'long enough for a patch to be smaller' });
    stream.publish(body(1), ts, ts, 1);
    stream.publish(body(2), ts, ts, 2);
    expect(() => stream.publish(body('poison'), ts, ts, 3)).toThrow(RangeError);
    expect(stream.seq).toBe(2);
    expect(stream.state).toEqual(body(2));
    stream.publish(body(3), ts, ts, 4);
    expect(client.messages.map((m) => [m.type, m.seq])).toEqual([
      ['snapshot', 1],
      ['update', 2],
      ['update', 3],
    ]);
    expect(client.body).toEqual(body(3));
  });

  it('sends a body the diff gives up on (a long keyed list shuffled) as a snapshot with the next seq', () => {
    const { stream, client } = restStream();
    stream.publish({ items: records(5_000, 1) }, ts, ts, 1);
    stream.publish({ items: records(5_000, 7) }, ts, ts, 2);
    stream.publish({ items: records(5_000, 7), total: 1 }, ts, ts, 3);
    expect(client.messages.map((m) => [m.type, m.seq])).toEqual([
      ['snapshot', 1],
      ['snapshot', 2],
      ['update', 3],
    ]);
    expect(client.body).toEqual({ items: records(5_000, 7), total: 1 });
  });

  it('sends no update larger than the snapshot it replaces: an unkeyed list with one element prepended', () => {
    const { stream, client } = restStream();
    const list = Array.from({ length: 50 }, (_, i) => `entry ${i}`);
    stream.publish({ list }, ts, ts, 1);
    stream.publish({ list: ['new', ...list] }, ts, ts, 2);
    stream.publish({ list: ['new', ...list], more: true }, ts, ts, 3);
    const [, whole, update] = client.messages;
    expect(whole).toMatchObject({ type: 'snapshot', seq: 2, data: { list: ['new', ...list] } });
    expect(update).toMatchObject({ type: 'update', seq: 3 });
    expect(client.body).toEqual({ list: ['new', ...list], more: true });
  });

  it('resumes through a snapshot sent in place of an update; not from before it', () => {
    const { stream } = restStream();
    stream.publish({ items: records(5_000, 1) }, ts, ts, 1);
    stream.publish({ items: records(5_000, 1), n: 1 }, ts, ts, 2);
    stream.publish({ items: records(5_000, 7), n: 1 }, ts, ts, 3);
    stream.publish({ items: records(5_000, 7), n: 2 }, ts, ts, 4);
    expect(stream.updatesSince(stream.epoch, 1)).toBeUndefined();
    const resumed = new Client();
    resumed.body = { items: records(5_000, 1), n: 1 };
    for (const frame of stream.updatesSince(stream.epoch, 2) ?? []) resumed.receive(frame);
    expect(resumed.messages.map((m) => [m.type, m.seq])).toEqual([
      ['snapshot', 3],
      ['update', 4],
    ]);
    expect(resumed.body).toEqual({ items: records(5_000, 7), n: 2 });
    expect(stream.snapshotFrame().position).toEqual({ epoch: stream.epoch, seq: 4 });
  });
});
