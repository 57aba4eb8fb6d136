/**
 * @module relay/session/record-seam
 * A subscription with `since` a time answered from the relay's record (docs/protocol.md "History
 * and replay"; docs/history.md "Since"), read only through the store's interface
 * (history/store.ts). The session has joined the live stream; its live messages are held here.
 * Before `subscribed` goes out, the recorder's buffer is written (so the record holds everything
 * up to the join) and the state at the time is folded from the record (relay/streams/state-at.ts),
 * which says how far back the answer reaches. Once released: that state as one `snapshot` at the
 * position of the last message at or before the time, every recorded message after it as it was
 * sent, then the held live messages after the last one sent. What does not follow on (a write the
 * recorder lost, a lease holder's buffer on another relay not written yet) comes from the stream's
 * resume ring when it still holds it, else the stream's current snapshot takes its place: never a
 * gap, never a duplicate.
 */
import type { SinceSpec } from '../../../packages/protocol/src/channels/history.ts';
import type { HistoryCoverage } from '../../../packages/protocol/src/protocol/history.ts';
import type { RecordReader } from '../../history/recorder.ts';
import type { RecordedMessage } from '../../history/store.ts';
import { codecs, type StreamCodec } from '../channels/codecs.ts';
import {
  dataMessage,
  encodeTextFrame,
  type Frame,
  frameOfWire,
  type StreamPosition,
  toFrame,
} from '../streams/frame.ts';
import { sentText } from '../streams/recorded.ts';
import type { FoldedState } from '../streams/recorded-state.ts';
import { foldStateAt } from '../streams/state-at.ts';
import type { AnyStream } from '../streams/stream.ts';

/** A `since` subscription waiting for its history: holds live frames until released. */
export interface PendingSince {
  /** Where the answer starts; undefined when it failed (its error goes out on release). */
  readonly coverage: Promise<HistoryCoverage | undefined>;
  /** A live frame of the stream, held. */
  hold(frame: Frame): void;
  /** `subscribed` is out: the history may go. */
  release(): void;
  cancel(): void;
}

/** What a record seam needs of its session. */
export interface RecordSeamSession {
  /** Writes a stream message to the client, past the seams. */
  deliver(stream: AnyStream, frame: Frame): void;
  /** The read failed: the error goes out and the subscription is left. */
  fail(stream: AnyStream, message: string): void;
}

type TimeSince = Extract<SinceSpec, { kind: 'time' }>;

const frameOf = (record: RecordedMessage): Frame =>
  frameOfWire(encodeTextFrame(sentText(record)).wire, { epoch: record.epoch, seq: record.seq });

/** Whether a message at `next` may follow one at `last` on the wire (a snapshot always may). */
function follows(last: StreamPosition | undefined, frame: Frame, snapshot: boolean): boolean {
  const next = frame.position;
  if (next === undefined) return false;
  if (snapshot) return true;
  return last !== undefined && last.epoch === next.epoch && next.seq === last.seq + 1;
}

export class RecordSeam implements PendingSince {
  readonly coverage: Promise<HistoryCoverage | undefined>;
  readonly #held: { frame: Frame; snapshot: boolean }[] = [];
  #cancelled = false;
  /** The state at the time, when the record holds one. */
  #folded: FoldedState | undefined;
  /** Where the recorded messages sent after the state start (`rts` ms, inclusive). */
  #from = 0;
  /** The answer's first recorded message when there is no state at the time: its first snapshot after. */
  #first: RecordedMessage | undefined;
  /** Of a channel with a history of its own: the seam taking over where the record falls short. */
  #instead: PendingSince | undefined;
  #released = false;
  /** Why the preparation failed, for the error sent on release. */
  #failure: string | undefined;

  constructor(
    readonly stream: AnyStream,
    readonly since: TimeSince,
    readonly record: RecordReader,
    readonly session: RecordSeamSession,
    readonly done: () => void,
    /**
     * Of a channel that reads a history of its own (upstream's, or another stream's record): its
     * seam, joined now, for a record that starts late; undefined when that history cannot answer.
     */
    readonly upstream?: () => Promise<PendingSince | undefined>,
  ) {
    this.coverage = this.#prepare().catch((error: unknown) => {
      this.#failure = error instanceof Error ? error.message : String(error);
      return undefined;
    });
  }

  hold(frame: Frame): void {
    if (this.#instead !== undefined) this.#instead.hold(frame);
    else this.#held.push({ frame, snapshot: frame.text.startsWith('{"type":"snapshot"') });
  }

  cancel(): void {
    this.#cancelled = true;
    this.#instead?.cancel();
  }

  /** Sends the history once it is prepared (`subscribed` may have gone before, past its wait). */
  release(): void {
    if (this.#released || this.#cancelled) return;
    this.#released = true;
    void this.coverage.then(() => {
      if (this.#cancelled) return;
      if (this.#instead !== undefined) this.#instead.release();
      else if (this.#failure !== undefined) this.#fail(this.#failure);
      else
        this.#send().catch((error: unknown) =>
          this.#fail(error instanceof Error ? error.message : String(error)),
        );
    });
  }

  #fail(why: string): void {
    if (this.#cancelled) return;
    this.done();
    this.session.fail(
      this.stream,
      `the ${this.stream.channel} since ${this.since.text} could not be read: ${why}`,
    );
  }

  /** Writes the buffer, folds the state at the time and says where the answer starts. */
  async #prepare(): Promise<HistoryCoverage | undefined> {
    const { store } = this.record;
    await this.record.flush();
    const key = this.stream.key;
    const at = this.since.at;
    this.#folded = await foldStateAt(store, key, at);
    this.#from = at + 1;
    if (this.#folded !== undefined) return { from: this.since.text, complete: true };
    const instead = await this.upstream?.();
    if (instead !== undefined) {
      this.#instead = instead;
      if (this.#cancelled) instead.cancel();
      return instead.coverage;
    }
    for await (const message of store.read({ stream: key, from: at + 1, to: Date.now() + 1 }))
      if (message.type === 'snapshot') {
        this.#first = message;
        break;
      }
    const first = this.#first;
    if (first === undefined) return { from: new Date().toISOString(), complete: false };
    this.#from = Date.parse(first.rts);
    return { from: first.rts, complete: false };
  }

  async #send(): Promise<void> {
    const { store } = this.record;
    const folded = this.#folded;
    let last: StreamPosition | undefined;
    if (folded !== undefined) {
      const { at, state } = folded;
      const codec = codecs[this.stream.channel] as StreamCodec<unknown, unknown>;
      const position = { epoch: at.epoch, seq: at.seq, ts: at.ts, rts: at.rts };
      const snapshot = dataMessage(this.stream, 'snapshot', state, position, codec.checksum?.(state));
      this.session.deliver(this.stream, toFrame(snapshot));
      last = position;
    }
    // What arrived since the buffer was last written is in the record now, or held here.
    await this.record.flush();
    const first = this.#first;
    for await (const message of store.read({
      stream: this.stream.key,
      from: this.#from,
      to: Date.now() + 1,
    })) {
      if (this.#cancelled) return;
      // Before the answer's first snapshot (the same `rts`), or already sent.
      if (
        last === undefined &&
        first !== undefined &&
        (message.epoch !== first.epoch || message.seq < first.seq)
      )
        continue;
      if (last !== undefined && last.epoch === message.epoch && message.seq <= last.seq) continue;
      const frame = frameOf(message);
      if (!follows(last, frame, message.type === 'snapshot')) break;
      this.session.deliver(this.stream, frame);
      last = frame.position;
    }
    if (this.#cancelled) return;
    this.done();
    this.#sendHeld(last);
  }

  /** The held live messages after `last`; the current snapshot where they do not follow on. */
  #sendHeld(sent: StreamPosition | undefined): void {
    let last = sent;
    for (const { frame, snapshot } of this.#held) {
      const at = frame.position;
      if (at === undefined) continue;
      if (last !== undefined && last.epoch === at.epoch && at.seq <= last.seq) continue;
      if (!follows(last, frame, snapshot)) break;
      this.session.deliver(this.stream, frame);
      last = at;
    }
    if (!this.stream.hasState) return;
    // What neither the record (a hole, or the lease holder's buffer on another relay not written
    // yet) nor the held messages have, the stream's resume ring may: sent as a resume sends it.
    const missed = last === undefined ? undefined : this.stream.updatesSince(last.epoch, last.seq);
    if (missed !== undefined) {
      for (const frame of missed) this.session.deliver(this.stream, frame);
      return;
    }
    const current = this.stream.snapshotFrame();
    const now = current.position;
    if (last === undefined || now === undefined || last.epoch !== now.epoch || last.seq !== now.seq)
      this.session.deliver(this.stream, current);
  }
}
