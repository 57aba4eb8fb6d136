/**
 * @module relay/coordination/redis/target-streams
 * Cluster-wide streams of one poll target (docs/cluster.md "Cluster-wide streams"). The relay
 * holding the target's lease numbers every stream of it once for the cluster: it diffs each poll
 * against the target's state in Redis (so a new holder continues the same epoch at the next
 * `seq`), writes the messages through the fenced stream log, and only then hands them to its own
 * streams. Followers take the same messages from the target's channel and serve them as they are;
 * when they miss one they catch up from the log. While Redis is away the holder numbers the
 * cluster's streams on alone and writes what it numbered when Redis is back (unless another relay
 * wrote meanwhile: then its streams start over from the cluster's); any other relay numbers its own
 * streams in an epoch of its own, as a relay alone does, and rejoins the cluster's when Redis is back.
 */

import type { BookDepth } from '../../../../packages/protocol/src/protocol/messages.ts';
import type { TraceSpan } from '../../../util/tracing.ts';
import { toFrame } from '../../streams/frame.ts';
import type { Stream } from '../../streams/stream.ts';
import type { TargetStream } from '../codecs.ts';
import type {
  AppliedPoll,
  NumberingContext,
  PolledState,
  PollTimes,
  StreamNumbering,
} from '../stream-numbering.ts';
import { type ClusterCodec, fits, loggedFrames, storedState } from './codecs.ts';
import type { NumberedRecord } from './numbered-record.ts';
import { numberPoll, type OwnEntry, type Produced, producedFrom } from './numbering.ts';
import type { StreamBatch } from './stream-batch.ts';
import { parseJson, streamBatch } from './stream-batch.ts';
import type { StreamLog } from './stream-log.ts';
import { UnwrittenPolls } from './unwritten.ts';

export interface ClusterStreamContext extends NumberingContext {
  log: StreamLog;
  /** The CPU time (ms) numbering one poll took, for this relay's poll CPU share. */
  spent(ms: number): void;
  /** A history store the cluster shares: the holder records what it numbers, once written. */
  record?: NumberedRecord;
}

export class ClusterTarget<State, Delta> implements StreamNumbering<State, Delta> {
  /** The next holder continues from the whole state, and followers serve the shared response. */
  readonly keepsWholeState = true;
  readonly key: string;
  readonly market: string;
  readonly #codec: ClusterCodec<State, Delta>;
  readonly #context: ClusterStreamContext;
  #produced: Produced<State> | undefined;
  /** What we numbered under our lease while Redis was away, not written yet. */
  readonly #unwritten = new UnwrittenPolls((entries) => this.#context.record?.record(entries));
  /**
   * Epochs this relay started for its own streams while Redis was away. Only those may it number
   * alone: a stream in the cluster's epoch (the cluster's message may have reached it since) must
   * never get a `seq` of this relay's, which would differ from the holder's.
   */
  readonly #ownEpochs = new Set<string>();
  /** The newest lease token whose messages were applied here: older holders' are ignored. */
  #appliedToken = 0;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(key: string, market: string, codec: ClusterCodec<State, Delta>, context: ClusterStreamContext) {
    this.key = key;
    this.market = market;
    this.#codec = codec;
    this.#context = context;
  }

  /**
   * The lease holder's poll: numbered against the state in Redis, written (fenced), then served
   * here. Undefined when the write was refused: the lease is no longer ours. Polls are numbered in
   * the order they arrive here, one at a time; the lease's fencing token ranks the holders.
   */
  async produce(poll: PolledState<State, Delta>, times: PollTimes): Promise<AppliedPoll | undefined> {
    if (!('whole' in poll)) throw new Error("the cluster's numbering numbers a target's whole state");
    const span = times.trace?.child('numbering', { 'market_relay.cluster': true });
    try {
      const applied = await this.#serially(() => this.#produce(poll.whole, times, span));
      span?.set({ 'market_relay.changed': applied?.changed ?? false });
      return applied;
    } catch (error) {
      span?.fail(error);
      throw error;
    } finally {
      span?.end();
    }
  }

  /** The holder says the market is gone upstream; false when the lease is no longer ours. */
  close(): Promise<boolean> {
    return this.#serially(async () => {
      const outcome = await this.#context.log.close(
        this.key,
        this.#codec.streams.map(({ field }) => field),
      );
      return outcome !== 'fenced';
    });
  }

  /** What the holder wrote, received on the target's channel. */
  follow(payload: string): Promise<AppliedPoll | undefined> {
    const batch = parseJson(streamBatch, payload);
    if (batch === undefined) return Promise.resolve(undefined);
    return this.#serially(() => this.#follow(batch));
  }

  /** Streams here without a state (new subscribers) get the cluster's from the log. */
  catchUp(): Promise<unknown> {
    return this.#serially(() => this.#catchUp(this.#codec.streams));
  }

  async #produce(
    state: State,
    { ts, rts, receivedAt }: PollTimes,
    trace: TraceSpan | undefined,
  ): Promise<AppliedPoll | undefined> {
    const { log } = this.#context;
    const token = log.token(this.key);
    if (token === undefined) {
      this.#abandonUnwritten();
      return this.#produceAlone(state, ts, rts, receivedAt);
    }
    // Whether what we number on from is known to be the cluster's position under this token.
    let verified = this.#produced?.token === token;
    if (!verified) {
      const loaded = await log.load(this.key, []);
      if (loaded === undefined && this.#produced === undefined)
        return this.#produceAlone(state, ts, rts, receivedAt);
      if (loaded !== undefined) {
        verified = true;
        // The stored state is still the one we numbered on from (or Redis lost it): ours to continue.
        // One this relay cannot read was written by another since: its streams start over.
        const stored = loaded.stored;
        const another = loaded.unreadable || (stored !== undefined && stored.token !== this.#produced?.token);
        if (this.#produced === undefined || another) {
          this.#abandonUnwritten();
          this.#produced = producedFrom(this.#codec, loaded, token);
          // The holder before us may have left its last writes out of the record.
          if (stored !== undefined) this.#context.record?.takenOver(stored);
        }
      }
    }
    const produced = this.#produced!;
    // Unverified (Redis away when asked): numbered on alone, and written once verified.
    const unwritten = verified ? await this.#unwritten.write(log, this.key) : 'unavailable';
    if (unwritten === 'fenced') return undefined; // kept: whether it is still ours shows at the next claim
    if (unwritten === 'written') produced.token = token;
    const times = { ts, rts };
    // Numbering and encoding run synchronously (until the commit's first await): their time is CPU.
    const started = performance.now();
    const written = this.#codec.streams.map((stream) =>
      numberPoll(this.#codec, this.#streamOf(stream), stream, produced, state, times),
    );
    const positions = new Map(written.map((entry) => [entry.stream, { epoch: entry.epoch, seq: entry.seq }]));
    const changed = written.some((entry) => entry.kind !== 'confirm');
    const restate = changed || produced.restate === true;
    const poll = { state: restate ? JSON.stringify(state) : undefined, ts, rts, receivedAt };
    const write =
      unwritten === 'unavailable' ? undefined : trace?.child('redis write', { 'db.system.name': 'redis' });
    const committing = unwritten === 'unavailable' ? 'unavailable' : log.commit(this.key, poll, written);
    this.#context.spent(performance.now() - started);
    const outcome = await committing;
    write?.set({ 'market_relay.outcome': outcome });
    write?.end();
    if (outcome === 'fenced') {
      this.#abandonUnwritten();
      this.#produced = undefined;
      return undefined;
    }
    // Recorded once in Redis: what was numbered alone meanwhile is recorded when it is written.
    if (outcome === 'written') this.#context.record?.record(written);
    if (outcome === 'unavailable') {
      // Redis away: still the holder, we number on alone and write it all when Redis is back.
      this.#unwritten.add({ ...poll, state: JSON.stringify(state) }, written);
      this.#produced = { token: produced.token, state, positions, restate: produced.restate === true };
    } else {
      this.#produced = { token, state, positions };
      this.#appliedToken = Math.max(this.#appliedToken, token);
    }
    let first = false;
    const behind: TargetStream[] = [];
    for (const entry of written) {
      const stream = this.#local(entry.stream);
      if (stream === undefined) continue;
      first ||= !stream.hasState || stream.epoch !== entry.epoch;
      if (!this.#serveOwn(stream, entry, { ts, rts, at: receivedAt, trace }))
        behind.push(this.#codec.streams.find(({ field }) => field === entry.stream)!);
    }
    if (outcome === 'unavailable') {
      // Behind, with no log to catch up from: served alone until Redis is back.
      for (const { field, depth } of behind)
        this.#serveAlone(field, this.#codec.project(state, depth), times, receivedAt);
      return { receivedAt, changed: written.some((entry) => entry.kind === 'update'), first };
    }
    // The log has every update up to ours: a stream behind catches up rather than start over.
    if (behind.length > 0) await this.#catchUp(behind);
    return { receivedAt, changed: written.some((entry) => entry.kind === 'update'), first };
  }

  /** Redis away: this relay numbers the streams it serves itself, in an epoch of its own. */
  #produceAlone(state: State, ts: string, rts: string, receivedAt: number): AppliedPoll {
    let changed = false;
    let first = false;
    for (const { field, depth } of this.#codec.streams) {
      const stream = this.#local(field);
      if (stream === undefined) continue;
      first ||= !stream.hasState || !this.#ownEpochs.has(stream.epoch);
      if (this.#serveAlone(field, this.#codec.project(state, depth), { ts, rts }, receivedAt)) changed = true;
    }
    return { receivedAt, changed, first };
  }

  /** One stream numbered by this relay alone, in an epoch of its own; true when it changed. */
  #serveAlone(field: string, next: State, times: { ts: string; rts: string }, at: number): boolean {
    const stream = this.#local(field);
    if (stream === undefined) return false;
    if (!this.#ownEpochs.has(stream.epoch)) {
      stream.fork();
      this.#ownEpochs.add(stream.epoch);
    }
    return this.#context.publisher.publish(stream, next, times.ts, times.rts, at);
  }

  /** A holder after us wrote (`token`): our own numbering is history, to be loaded again if ours again. */
  #writtenByAnother(token: number): void {
    if (this.#produced === undefined || token <= this.#produced.token) return;
    this.#abandonUnwritten();
    this.#produced = undefined;
  }

  /**
   * Another relay numbers the cluster's streams now, from before what we numbered alone: our
   * streams start over from the cluster's (a snapshot), never mixing its numbers with ours.
   */
  #abandonUnwritten(): void {
    if (!this.#unwritten.pending) return;
    const positions = this.#produced?.positions;
    this.#unwritten.clear();
    this.#produced = undefined;
    for (const [field, position] of positions ?? []) {
      const stream = this.#local(field);
      if (stream?.epoch === position.epoch) stream.fork();
    }
  }

  /**
   * Our own write, now in Redis, served here as every follower serves it. False when this stream
   * is behind the position we continued from (a write of the previous holder still on its way).
   */
  #serveOwn(
    stream: Stream<State, Delta>,
    entry: OwnEntry<State>,
    { ts, rts, at, trace }: { ts: string; rts: string; at: number; trace: TraceSpan | undefined },
  ): boolean {
    const { publisher } = this.#context;
    const inStep = stream.hasState && stream.epoch === entry.epoch;
    if (entry.kind === 'update' && inStep && stream.seq === entry.seq - 1 && entry.frame !== undefined) {
      stream.advance([{ seq: entry.seq, frame: entry.frame }], entry.state, ts, rts, at);
      publisher.served(stream, entry.frame, 'update', at, trace);
      return true;
    }
    if (entry.kind === 'confirm' && inStep && stream.seq === entry.seq) {
      stream.confirm(rts, at);
      publisher.served(stream, null, 'update', at);
      return true;
    }
    if (entry.kind !== 'reset') return false;
    stream.reset(entry, entry.state, ts, rts, at);
    publisher.served(stream, stream.snapshotFrame(), 'snapshot', at, trace);
    return true;
  }

  async #follow(batch: StreamBatch): Promise<AppliedPoll | undefined> {
    if (batch.token < this.#appliedToken) return undefined; // a holder the lease has left since
    this.#appliedToken = batch.token;
    this.#writtenByAnother(batch.token);
    if ('closed' in batch) {
      this.#context.closeMarket();
      return undefined;
    }
    const { publisher } = this.#context;
    const behind: TargetStream[] = [];
    let changed = false;
    let first = false;
    for (const target of this.#codec.streams) {
      const stream = this.#local(target.field);
      if (stream === undefined) continue;
      const entry = batch.entries.find((candidate) => candidate.stream === target.field);
      if (entry === undefined) continue;
      const message = entry.message;
      const position = { epoch: entry.epoch, seq: entry.seq };
      if (message !== undefined && !fits(this.#codec, message, this.#streamOf(target), position)) continue;
      const inStep = stream.hasState && stream.epoch === entry.epoch;
      if (inStep && entry.seq < stream.seq) continue; // already here (a catch-up was quicker)
      if (inStep && entry.seq === stream.seq) {
        stream.confirm(batch.rts, batch.receivedAt);
        publisher.served(stream, null, 'update', batch.receivedAt);
        continue;
      }
      if (entry.kind === 'reset' && message !== undefined) {
        const state = this.#codec.snapshotState(message);
        if (state === undefined) continue;
        first = true;
        stream.reset(position, state, batch.ts, batch.rts, batch.receivedAt);
        publisher.served(stream, stream.snapshotFrame(), 'snapshot', batch.receivedAt);
        continue;
      }
      const delta = message === undefined ? undefined : this.#codec.delta(message);
      if (
        entry.kind === 'update' &&
        inStep &&
        entry.seq === stream.seq + 1 &&
        delta !== undefined &&
        message !== undefined
      ) {
        const state = this.#codec.apply(stream.state as State, delta);
        if (!('checksum' in message) || this.#codec.checksum?.(state) === message.checksum) {
          const frame = toFrame(message);
          stream.advance([{ seq: entry.seq, frame }], state, batch.ts, batch.rts, batch.receivedAt);
          publisher.served(stream, frame, 'update', batch.receivedAt);
          changed = true;
          continue;
        }
      }
      behind.push(target);
    }
    if (behind.length > 0) first = (await this.#catchUp(behind)) || first;
    return { receivedAt: batch.receivedAt, changed, first };
  }

  /**
   * Brings `streams` here to the cluster's position from the log: the updates missed when the log
   * still has them all, else a snapshot. Streams already there are left alone. True when some
   * stream here started over from a snapshot.
   */
  async #catchUp(streams: readonly TargetStream[]): Promise<boolean> {
    const local = streams
      .map((target) => ({ target, stream: this.#local(target.field) }))
      .filter(
        (pair): pair is { target: TargetStream; stream: Stream<State, Delta> } => pair.stream !== undefined,
      );
    if (local.length === 0) return false;
    const loaded = await this.#context.log.load(
      this.key,
      local
        .filter(({ stream }) => stream.hasState)
        .map(({ target, stream }) => ({ stream: target.field, afterSeq: stream.seq })),
    );
    const stored = loaded?.stored;
    const state = stored === undefined ? undefined : storedState(this.#codec, stored);
    if (loaded === undefined || stored === undefined || state === undefined) return false;
    const { publisher, now } = this.#context;
    let restarted = false;
    for (const { target, stream } of local) {
      const position = stored.positions.get(target.field);
      if (position === undefined) continue;
      if (stream.hasState && stream.epoch === position.epoch && stream.seq >= position.seq) continue;
      const projected = this.#codec.project(state, target.depth);
      const missed =
        stream.hasState && stream.epoch === position.epoch
          ? loggedFrames(
              this.#codec,
              this.#streamOf(target),
              position.epoch,
              loaded.history.get(target.field) ?? [],
              stream.seq,
            )
          : undefined;
      if (missed !== undefined && missed.length === position.seq - stream.seq) {
        stream.advance(missed, projected, stored.ts, stored.rts, now());
        for (const { frame } of missed) publisher.served(stream, frame, 'update', now());
      } else {
        restarted = true;
        stream.reset(position, projected, stored.ts, stored.rts, now());
        publisher.served(stream, stream.snapshotFrame(), 'snapshot', now());
      }
    }
    this.#appliedToken = Math.max(this.#appliedToken, stored.token);
    this.#writtenByAnother(stored.token);
    return restarted;
  }

  #streamOf(stream: TargetStream): { market: string; depth: BookDepth | undefined } {
    return { market: this.market, depth: stream.depth };
  }

  #local(field: string): Stream<State, Delta> | undefined {
    const target = this.#codec.streams.find((stream) => stream.field === field);
    return target === undefined
      ? undefined
      : this.#codec.local(this.#context.registry, this.market, target.depth);
  }

  /** One thing at a time per target: polls, received batches and catch-ups apply in order. */
  #serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => {});
    return run;
  }
}
