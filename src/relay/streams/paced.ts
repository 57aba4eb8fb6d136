/**
 * @module relay/streams/paced
 * The subscribers of one stream that asked for one `interval` and `threshold` (docs/protocol.md
 * "Per-subscription options"), sent to as a group so that each gets the same prebuilt message at
 * the same moment: the change from the state the group was last sent to the latest one.
 *
 * An `interval` paces: a change after a quiet interval goes out at once (leading edge), changes
 * within an interval are conflated into one update from the last state sent to the latest when it
 * ends (trailing edge), and an interval in which nothing changed sends nothing.
 *
 * A `threshold` gates: a state goes out only when it moved by the threshold from the one the group
 * last sent (./threshold.ts). A state withheld goes out once the stream has been still for the
 * settle time (the interval, else `THRESHOLD_SETTLE_MS`), so moves below the threshold that add up
 * to nothing send nothing, and the final state always arrives.
 */
import { THRESHOLD_SETTLE_MS } from '../../../packages/protocol/src/protocol/limits.ts';
import { thresholdMove } from './threshold.ts';

/** A subscription's contract beyond every change: both absent means raw. */
export interface Pace {
  interval?: number | undefined;
  threshold?: string | undefined;
}

/** A state of the stream and where it stands: what a group sent, and what it sends next. */
export interface PacedState {
  readonly state: unknown;
  readonly epoch: string;
  readonly seq: number;
}

/** Sends the stream's current state to `members`, as the change from `sent` where it can. */
export type SendPaced<Member> = (members: ReadonlySet<Member>, sent: PacedState) => void;

export class PacedGroup<Member> {
  readonly interval: number | undefined;
  readonly threshold: string | undefined;
  readonly members = new Set<Member>();
  readonly #send: SendPaced<Member>;
  readonly #current: () => PacedState;
  /** Running while an interval since the last send has not ended. */
  #paceTimer: NodeJS.Timeout | undefined;
  /** A send is due when the running interval ends. */
  #owed = false;
  /** Running while a withheld change waits for the stream to settle. */
  #settleTimer: NodeJS.Timeout | undefined;
  /** The stream settled on a withheld change: the next send need not pass the threshold. */
  #settled = false;
  /** The state the group last sent: the next message is the change from it; thresholds compare against it. */
  #sent: PacedState;

  /** `current`: the stream's current state; the group starts from it (its members were just sent it). */
  constructor(pace: Pace, send: SendPaced<Member>, current: () => PacedState) {
    this.interval = pace.interval;
    this.threshold = pace.threshold;
    this.#send = send;
    this.#current = current;
    this.#sent = current();
  }

  /** The stream took a new state. */
  changed(): void {
    if (this.threshold !== undefined) this.#awaitSettle();
    if (this.#paceTimer !== undefined) {
      this.#owed = true;
      return;
    }
    this.#consider();
  }

  stop(): void {
    clearTimeout(this.#paceTimer);
    clearTimeout(this.#settleTimer);
    this.#paceTimer = undefined;
    this.#settleTimer = undefined;
    this.#owed = false;
    this.#settled = false;
  }

  /** Sends the current state if it is due: always without a threshold, else when it moved enough. */
  #consider(): void {
    if (this.threshold === undefined || this.#settled) {
      this.#sendNow();
      return;
    }
    if (thresholdMove(this.#sent.state, this.#current().state, this.threshold) === 'moved') this.#sendNow();
  }

  /**
   * Each change starts the settle time over: a state goes out once the stream stops moving. A busy
   * stream changes on most polls, so the running timer is restarted in place (`refresh`) rather
   * than cleared and made again for every change of every group.
   */
  #awaitSettle(): void {
    if (this.#settleTimer !== undefined) {
      this.#settleTimer.refresh();
      return;
    }
    this.#settleTimer = setTimeout(this.#settle, this.interval ?? THRESHOLD_SETTLE_MS);
    this.#settleTimer.unref();
  }

  readonly #settle = (): void => {
    this.#settleTimer = undefined;
    if (thresholdMove(this.#sent.state, this.#current().state, this.threshold ?? '0') === 'same') return;
    this.#settled = true;
    if (this.#paceTimer === undefined) this.#sendNow();
    else this.#owed = true;
  };

  #sendNow(): void {
    this.#owed = false;
    this.#settled = false;
    clearTimeout(this.#settleTimer);
    this.#settleTimer = undefined;
    const sent = this.#sent;
    this.#sent = this.#current();
    if (this.interval !== undefined) {
      this.#paceTimer = setTimeout(() => this.#intervalEnded(), this.interval);
      this.#paceTimer.unref();
    }
    this.#send(this.members, sent);
  }

  #intervalEnded(): void {
    this.#paceTimer = undefined;
    if (this.#owed) {
      this.#owed = false;
      this.#consider();
    }
  }
}
