/**
 * @module relay/coordination/redis/resume
 * Resume on any relay (docs/cluster.md "Cluster-wide streams"): a client that comes from another
 * relay resumes from a position this relay's ring may not hold. The cluster's history of the
 * stream (its Redis Stream) is read before the client joins, and at the join the missed updates are
 * the logged ones followed by this relay's own newer ones, when together they leave no gap. A stream
 * new on this relay starts from the cluster's state, so it continues the same epoch.
 */

import type { BookDepth, Channel, ResumePoint } from '../../../../packages/protocol/src/protocol/messages.ts';
import { isNumberedChannel, type NumberedChannel } from '../../channels/relay-registry.ts';
import type { Frame } from '../../streams/frame.ts';
import { type HistoryReplay, NOTHING_FETCHED, type ResumeHistory } from '../../streams/registry.ts';
import type { AnyStream, Stream, StreamSubscriber } from '../../streams/stream.ts';
import { type ClusterCodec, clusterCodecOfChannel, fieldOf, loggedFrames, storedState } from './codecs.ts';
import { numberedTargetKey } from './keys.ts';
import type { LoadedTarget, StreamLog } from './stream-log.ts';

export class ClusterResume implements ResumeHistory {
  readonly #log: StreamLog;
  readonly #now: () => number;

  constructor(log: StreamLog, now: () => number = Date.now) {
    this.#log = log;
    this.#now = now;
  }

  /** The cluster numbers the `book` and `price` streams; each relay numbers the others itself. */
  fetch(
    channel: Channel,
    depth: BookDepth | undefined,
    points: readonly [market: string, from: ResumePoint][],
  ): HistoryReplay | Promise<HistoryReplay> {
    if (!isNumberedChannel(channel)) return NOTHING_FETCHED;
    return this.#fetch(channel, depth, points);
  }

  async #fetch(
    channel: NumberedChannel,
    depth: BookDepth | undefined,
    points: readonly [market: string, from: ResumePoint][],
  ): Promise<HistoryReplay> {
    const codec = clusterCodecOfChannel(channel);
    const field = fieldOf(codec, depth);
    const loaded = new Map<string, LoadedTarget>();
    await Promise.all(
      points.map(async ([market, from]) => {
        const key = numberedTargetKey(channel, market);
        const target = await this.#log.load(key, [{ stream: field, afterSeq: from.seq }]);
        if (target !== undefined) loaded.set(market, target);
      }),
    );
    return {
      replay: (stream, subscriber, from) => {
        const target = loaded.get(stream.market);
        if (target === undefined) return undefined;
        if (stream.channel !== channel) return undefined;
        return this.#setAside(subscriber, stream, () => this.#replay(codec, stream, from, target));
      },
    };
  }

  /**
   * A stream new here is restored from the history first, which sends a snapshot to the
   * subscribers waiting for one; the joining subscriber gets its own first messages.
   */
  #setAside<T>(subscriber: StreamSubscriber, stream: Pick<AnyStream, 'subscribers'>, replay: () => T): T {
    stream.subscribers.delete(subscriber);
    try {
      return replay();
    } finally {
      stream.subscribers.add(subscriber);
    }
  }

  /** The updates after `from`, from the log then this relay's ring; undefined when they leave a gap. */
  #replay<State, Delta>(
    codec: ClusterCodec<State, Delta>,
    stream: Stream<State, Delta>,
    from: ResumePoint,
    target: LoadedTarget,
  ): Frame[] | undefined {
    const { stored } = target;
    const field = fieldOf(codec, stream.depth);
    const position = stored?.positions.get(field);
    const state = stored === undefined ? undefined : storedState(codec, stored);
    if (stored === undefined || position === undefined || state === undefined) return undefined;
    const logged = loggedFrames(
      codec,
      { market: stream.market, depth: stream.depth },
      position.epoch,
      target.history.get(field) ?? [],
      from.seq,
    );
    const reached = from.seq + (logged?.length ?? 0);
    const resumable = logged !== undefined && from.epoch === position.epoch && reached === position.seq;
    if (!stream.hasState) {
      // New here: it continues the cluster's numbering, its ring holding what was read.
      const projected = codec.project(state, stream.depth);
      stream.reset(position, projected, stored.ts, stored.rts, this.#now(), resumable ? logged : []);
      return resumable ? stream.updatesSince(from.epoch, from.seq) : undefined;
    }
    if (logged === undefined || from.epoch !== position.epoch || stream.epoch !== position.epoch)
      return undefined;
    if (stream.seq < from.seq) return undefined;
    if (stream.seq <= reached) return logged.filter(({ seq }) => seq <= stream.seq).map(({ frame }) => frame);
    const newer = stream.updatesSince(position.epoch, reached);
    return newer === undefined ? undefined : [...logged.map(({ frame }) => frame), ...newer];
  }
}
