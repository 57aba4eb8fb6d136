/**
 * The log sink (observability/log-sink.ts): a destination that stops taking lines costs lines,
 * counted, with one notice when it takes lines again; one that fails is never written again.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LogSink } from '../../src/observability/log-sink.ts';

/** A destination that holds every write until `release()`. */
function stalledDestination() {
  const held: (() => void)[] = [];
  const lines: string[] = [];
  const stream = new Writable({
    highWaterMark: 10,
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      held.push(done);
    },
  });
  const release = () => {
    for (const done of held.splice(0)) done();
  };
  return { stream, lines, release };
}

describe('LogSink', () => {
  it('drops and counts lines while the destination is full, and says so once it drains', async () => {
    const { stream, lines, release } = stalledDestination();
    const notices: string[] = [];
    const sink = new LogSink(stream, { maxBufferBytes: 30, notice: (text) => notices.push(text) });
    for (let i = 0; i < 10; i += 1) sink.write(`line ${i}\n`);
    expect(sink.droppedLines).toBe(5);
    while (stream.writableLength > 0) {
      release();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(notices).toEqual(['market-relay: 5 log lines dropped: the log destination was full or slow\n']);
    sink.write('after\n');
    release();
    expect(lines.at(-1)).toBe('after\n');
  });

  it('never writes again to a destination that failed', () => {
    const stream = new Writable({
      write(_chunk, _encoding, done) {
        done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    const sink = new LogSink(stream, { notice: () => {} });
    sink.write('first\n');
    return new Promise<void>((resolve) => {
      setImmediate(() => {
        sink.write('second\n');
        sink.write('third\n');
        expect(sink.droppedLines).toBe(2);
        resolve();
      });
    });
  });
});
