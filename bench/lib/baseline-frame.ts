/**
 * @module bench/lib/baseline-frame
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

/** Counts whole messages owed per cycle for a fractional per-cycle rate. */
export class MessageCredit {
  #owed = 0;
  readonly #perCycle: number;
  constructor(perCycle: number) {
    this.#perCycle = perCycle;
  }
  take(): number {
    this.#owed += this.#perCycle;
    const whole = Math.floor(this.#owed);
    this.#owed -= whole;
    return whole;
  }
}
