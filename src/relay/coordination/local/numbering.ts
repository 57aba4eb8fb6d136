/**
 * @module relay/coordination/local/numbering
 * A relay alone numbers the streams of a poll target itself (relay/coordination/stream-numbering.ts):
 * each poll goes straight to this relay's streams through the publisher, which diffs it against the
 * state each stream holds. Nothing is encoded or written for a cluster, and nobody else is asked
 * whether the target's streams may end.
 */
import type { NumberedCodec } from '../codecs.ts';
import type { AppliedPoll, NumberingContext, PollTimes, StreamNumbering } from '../stream-numbering.ts';

export class LocalNumbering<State, Delta> implements StreamNumbering<State> {
  readonly keepsWholeState = false;
  readonly #market: string;
  readonly #codec: NumberedCodec<State, Delta>;
  readonly #context: Pick<NumberingContext, 'registry' | 'publisher'>;
  /** When the request behind the newest poll numbered was asked. */
  #askedAt = Number.NEGATIVE_INFINITY;
  /** The state last served: the same object again is the same state, which is only confirmed. */
  #last: State | undefined;

  constructor(
    market: string,
    codec: NumberedCodec<State, Delta>,
    context: Pick<NumberingContext, 'registry' | 'publisher'>,
  ) {
    this.#market = market;
    this.#codec = codec;
    this.#context = context;
  }

  async produce(state: () => State, poll: PollTimes): Promise<AppliedPoll | undefined> {
    if (poll.askedAt < this.#askedAt) return undefined;
    this.#askedAt = poll.askedAt;
    const { registry, publisher } = this.#context;
    const streams = this.#codec.streams.flatMap(({ depth }) => {
      const stream = this.#codec.local(registry, this.#market, depth);
      return stream === undefined ? [] : [{ stream, depth }];
    });
    if (streams.length === 0) return undefined;
    const span = poll.trace?.child('numbering', { 'market_relay.streams': streams.length });
    const next = state();
    const same = next === this.#last;
    this.#last = next;
    const { ts, rts, receivedAt } = poll;
    let changed = false;
    let first = false;
    for (const { stream, depth } of streams) {
      first ||= !stream.hasState;
      if (same && stream.hasState) publisher.confirm(stream, rts, receivedAt);
      else if (publisher.publish(stream, this.#codec.project(next, depth), ts, rts, receivedAt, span))
        changed = true;
    }
    span?.set({ 'market_relay.changed': changed });
    span?.end();
    return { receivedAt, changed, first };
  }

  async close(): Promise<boolean> {
    return true;
  }
}
