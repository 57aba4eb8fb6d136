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
 * last sent (./threshold.ts), so moves below it add up. The state withheld goes out as the catch-up
 * with the `THRESHOLD_CATCH_UP_POLLS`-th poll of the stream after the poll that brought the first
 * change since the last send, if it still differs from what the group was sent then: the state is
 * never wrong for longer than that, and moves back where they began by then send nothing. Counted in the stream's polls (./subscribers.ts
 * `polled`), never in time, so that at any poll interval at most one message in that many polls
 * is a catch-up (a timer that ran out between two polls would send every change).
 */
import { THRESHOLD_CATCH_UP_POLLS } from '../../../packages/protocol/src/protocol/limits.ts';
import { type Move, thresholdMove } from './threshold.ts';

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
  /** The polls of the stream the group has seen. */
  #polls = 0;
  /** The number of the poll that brought the first change since the last send, if any. */
  #withheldAt: number | undefined;
  /** The catch-up is due: the next send need not pass the threshold. */
  #catchingUp = false;
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

  /** The stream took a new state (before the `polled` of the poll that brought it). */
  changed(): void {
    if (this.threshold === undefined) {
      if (this.#paceTimer === undefined) this.#sendNow();
      else this.#owed = true;
      return;
    }
    const move = thresholdMove(this.#sent.state, this.#current().state, this.threshold);
    // The first change since the last send starts the count to the catch-up, whatever follows: a
    // count started over by each return to the state sent would let a price flickering around it
    // stay wrong on most polls. (A change that moved enough is sent, which ends the count, at once
    // or, paced, when its interval ends.)
    if (move !== 'same') this.#withheldAt ??= this.#polls + 1;
    if (this.#paceTimer === undefined) this.#decide(move);
    else this.#owed = true;
  }

  /** A poll of the stream ended, changed or not: a change withheld long enough goes out now. */
  polled(): void {
    this.#polls += 1;
    if (this.#withheldAt === undefined || this.#polls - this.#withheldAt < THRESHOLD_CATCH_UP_POLLS) return;
    this.#withheldAt = undefined;
    this.#catchingUp = true;
    if (this.#paceTimer === undefined) this.#consider();
    else this.#owed = true;
  }

  stop(): void {
    clearTimeout(this.#paceTimer);
    this.#paceTimer = undefined;
    this.#owed = false;
    this.#withheldAt = undefined;
    this.#catchingUp = false;
  }

  /** Sends the current state if it is due: always without a threshold, else when it moved enough or catches up. */
  #consider(): void {
    if (this.threshold === undefined) this.#sendNow();
    else this.#decide(thresholdMove(this.#sent.state, this.#current().state, this.threshold));
  }

  /** With a threshold: sends a move of it, or a smaller change when the catch-up is due. */
  #decide(move: Move): void {
    if (move === 'moved' || (move === 'withheld' && this.#catchingUp)) this.#sendNow();
    else if (move === 'same') this.#catchingUp = false;
  }

  #sendNow(): void {
    this.#owed = false;
    this.#catchingUp = false;
    this.#withheldAt = undefined;
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
