/**
 * @module relay/streams/paced
 * The subscribers of one stream that asked for one `interval` (docs/protocol.md "Per-subscription
 * options"), paced as a group so that each gets the same prebuilt snapshot at the same moment: a
 * change after a quiet interval goes out at once (leading edge), changes within an interval are
 * conflated into one snapshot of the latest state when it ends (trailing edge), and an interval in
 * which nothing changed sends nothing.
 */
export class PacedGroup<Member> {
  readonly interval: number;
  readonly members = new Set<Member>();
  readonly #send: (members: ReadonlySet<Member>) => void;
  /** Running while an interval since the last send has not ended. */
  #timer: NodeJS.Timeout | undefined;
  /** The stream changed since the last send. */
  #owed = false;

  constructor(interval: number, send: (members: ReadonlySet<Member>) => void) {
    this.interval = interval;
    this.#send = send;
  }

  /** The stream took a new state. */
  changed(): void {
    if (this.#timer !== undefined) {
      this.#owed = true;
      return;
    }
    this.#sendNow();
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#owed = false;
  }

  #sendNow(): void {
    this.#owed = false;
    this.#timer = setTimeout(() => this.#intervalEnded(), this.interval);
    this.#timer.unref();
    this.#send(this.members);
  }

  #intervalEnded(): void {
    this.#timer = undefined;
    if (this.#owed) this.#sendNow();
  }
}
