/**
 * @module bench/lib/baselines/baseline-frame
 * The frames the baseline servers send: the relay's shape (type, channel, seq, an ISO `rts` send
 * stamp the load generator reads exactly as it reads the relay's) padded to the relay's measured
 * mean frame size, so that every server moves the same bytes.
 */

export interface BaselineMessage {
  type: 'update';
  channel: 'book';
  topic: number;
  seq: number;
  rts: string;
  data: string;
}

/** A message whose JSON text is `bytes` long (when `bytes` exceeds the bare envelope). */
export function baselineMessage(
  bytes: number,
  topic: number,
  seq: number,
  rts = new Date(),
): BaselineMessage {
  const message: BaselineMessage = {
    type: 'update',
    channel: 'book',
    topic,
    seq,
    rts: rts.toISOString(),
    data: '',
  };
  const bare = JSON.stringify(message).length;
  message.data = 'x'.repeat(Math.max(0, Math.round(bytes) - bare));
  return message;
}

/** A baseline client's topics from its URL's `?topics=1,2,3` (default topic 0). */
export function topicsOf(list: string | null | undefined): number[] {
  const topics = (list ?? '')
    .split(',')
    .filter((item) => item.length > 0)
    .map(Number);
  return topics.length > 0 ? topics : [0];
}

export interface BroadcastPlan {
  /** One broadcast cycle every cycleMs (the relay's poll interval). */
  cycleMs: number;
  /** Messages per topic per cycle; fractional rates accumulate (0.9 = nine cycles in ten). */
  messagesPerCycle: number;
  /** Mean frame size of the relay in the same run, bytes. */
  frameBytes: number;
  /**
   * When the data "arrived", the latency origin, as the relay's `rts` is its receipt of one
   * upstream response: per message (fan-out: one book response per market) or once per cycle
   * (20 markets: one batch price response carries every market of the cycle).
   */
  stamp: 'message' | 'cycle';
}

/**
 * What a baseline has sent of its plan, in topic-messages (one message to one topic's members):
 * `asked` is what the schedule owed one whole cycle before the sample, `sent` how much of that had
 * gone out by the sample. A tick a little late (a busy machine) is not counted short, and a
 * sample taken between ticks reads the same as one taken on a tick, so a window's difference of two
 * samples is exact; `sent` falls below `asked` only while the baseline is over a cycle behind.
 */
export interface PacingSample {
  sent: number;
  asked: number;
}

/** The topics with members, as a Set of them or a Map from them (read at each tick: clients may join later). */
interface Topics {
  keys(): Iterable<number>;
  readonly size: number;
}

/**
 * Sends a plan by the wall clock: every cycle, each topic gets the messages its schedule owes by
 * now (cycles elapsed x messagesPerCycle) less those sent, so a late tick catches up instead of
 * being lost. A `setInterval` that sends one cycle's batch per tick sends less than asked when the
 * loop is busy (ticks arrive late and are never made up: an earlier `ws` anchor sent up to 28%
 * fewer messages than asked so). `send` is called once per topic-message.
 */
export class Pacer {
  readonly #plan: BroadcastPlan;
  readonly #topics: Topics;
  readonly #send: (topic: number, seq: number, rts: Date) => void;
  readonly #startedAt = performance.now();
  /** Messages sent to each topic so far, and the topic-messages sent. */
  #perTopic = 0;
  #sent = 0;
  #seq = 0;
  #cycle = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(plan: BroadcastPlan, topics: Topics, send: (topic: number, seq: number, rts: Date) => void) {
    this.#plan = plan;
    this.#topics = topics;
    this.#send = send;
    this.#schedule();
  }

  /** Per topic, messages owed after `cycles` whole cycles (fractional rates accumulate). */
  #owed(cycles: number): number {
    return Math.floor(cycles * this.#plan.messagesPerCycle);
  }

  #schedule(): void {
    const next = this.#startedAt + (this.#cycle + 1) * this.#plan.cycleMs;
    this.#timer = setTimeout(() => this.#tick(), Math.max(0, next - performance.now()));
  }

  #tick(): void {
    const elapsed = performance.now() - this.#startedAt;
    this.#cycle = Math.max(this.#cycle + 1, Math.floor(elapsed / this.#plan.cycleMs));
    const cycleStart = new Date();
    const count = this.#owed(this.#cycle) - this.#perTopic;
    for (let n = 0; n < count; n++) {
      for (const topic of this.#topics.keys()) {
        this.#send(topic, ++this.#seq, this.#plan.stamp === 'cycle' ? cycleStart : new Date());
        this.#sent += 1;
      }
    }
    this.#perTopic += count;
    this.#schedule();
  }

  sample(): PacingSample {
    const cycles = Math.floor((performance.now() - this.#startedAt) / this.#plan.cycleMs) - 1;
    const asked = this.#owed(Math.max(0, cycles)) * this.#topics.size;
    // Sends go out in schedule order, so what was sent of the first `asked` is the smaller of the two.
    return { sent: Math.min(this.#sent, asked), asked };
  }

  stop(): void {
    clearTimeout(this.#timer);
  }
}
