/**
 * @module relay/streams/subscribers
 * A stream's subscribers, with the relay's own (`internal`: a session following the catalogue for
 * its wildcards) counted apart as they come and go, so the clients a frame goes to are known
 * without walking the set on every publish. Those that asked for an `interval` or a `threshold`
 * are held apart in one paced group per (interval, threshold) (./paced.ts): the raw set a change is
 * fanned out to holds only the others, so pacing adds nothing to a raw subscriber's delivery, and a
 * group's frame is built once for all its members.
 */
import { type Pace, PacedGroup, type PacedState, type SendPaced } from './paced.ts';

export class Subscribers<Subscriber extends { readonly internal?: boolean }> extends Set<Subscriber> {
  #internal = 0;
  /** Clients (not internal) held in a paced group. */
  #pacedClients = 0;
  /** The subscribers each change goes to at once. */
  readonly #raw = new Set<Subscriber>();
  /** By `groupKey`. */
  readonly #groups = new Map<string, PacedGroup<Subscriber>>();
  readonly #paceOf = new Map<Subscriber, Pace>();
  readonly #sendPaced: SendPaced<Subscriber>;
  readonly #current: () => PacedState;

  /**
   * `sendPaced`: hands the stream's current state to a paced group's members, as the change from
   * the state the group last sent; `current`: the stream's current state and position (what a
   * group sends and a threshold compares).
   */
  constructor(sendPaced: SendPaced<Subscriber> = () => {}, current: () => PacedState = () => NO_STATE) {
    super();
    this.#sendPaced = sendPaced;
    this.#current = current;
  }

  /** The subscribers that are clients: each frame is one message to each. */
  get clients(): number {
    return this.size - this.#internal;
  }

  /** The clients each change goes to at once (all but the paced). */
  get rawClients(): number {
    return this.clients - this.#pacedClients;
  }

  /** The subscribers each change goes to at once (all but the paced). */
  get raw(): ReadonlySet<Subscriber> {
    return this.#raw;
  }

  /** The interval `subscriber` is paced at, or undefined (every change). */
  intervalOf(subscriber: Subscriber): number | undefined {
    return this.#paceOf.get(subscriber)?.interval;
  }

  /** The threshold `subscriber`'s messages wait for, or undefined (every change). */
  thresholdOf(subscriber: Subscriber): string | undefined {
    return this.#paceOf.get(subscriber)?.threshold;
  }

  /** The stream changed: each paced group sends now or at the end of its interval. */
  changed(): void {
    if (this.#groups.size === 0) return;
    for (const group of this.#groups.values()) group.changed();
  }

  /**
   * A poll of the stream ended, changed or not (after `changed` when it did): the threshold groups
   * count it towards their catch-up (./paced.ts).
   */
  polled(): void {
    if (this.#groups.size === 0) return;
    for (const group of this.#groups.values()) group.polled();
  }

  override add(subscriber: Subscriber): this {
    if (this.has(subscriber)) return this;
    if (subscriber.internal === true) this.#internal += 1;
    this.#raw.add(subscriber);
    return super.add(subscriber);
  }

  /**
   * Paces a subscriber held here at `interval` and gates it at `threshold`, or (both undefined)
   * gives it every change again.
   */
  pace(subscriber: Subscriber, interval: number | undefined, threshold?: string): void {
    const was = this.#paceOf.get(subscriber);
    if (!this.has(subscriber) || (was?.interval === interval && was?.threshold === threshold)) return;
    this.#unpace(subscriber);
    if (interval === undefined && threshold === undefined) {
      this.#raw.add(subscriber);
      return;
    }
    this.#raw.delete(subscriber);
    const key = groupKey(interval, threshold);
    let group = this.#groups.get(key);
    if (group === undefined) {
      group = new PacedGroup({ interval, threshold }, this.#sendPaced, this.#current);
      this.#groups.set(key, group);
    }
    group.members.add(subscriber);
    this.#paceOf.set(subscriber, { interval, threshold });
    if (subscriber.internal !== true) this.#pacedClients += 1;
  }

  override delete(subscriber: Subscriber): boolean {
    const held = super.delete(subscriber);
    if (!held) return false;
    if (subscriber.internal === true) this.#internal -= 1;
    this.#raw.delete(subscriber);
    this.#unpace(subscriber);
    return true;
  }

  override clear(): void {
    this.#internal = 0;
    this.#pacedClients = 0;
    this.#raw.clear();
    for (const group of this.#groups.values()) group.stop();
    this.#groups.clear();
    this.#paceOf.clear();
    super.clear();
  }

  #unpace(subscriber: Subscriber): void {
    const pace = this.#paceOf.get(subscriber);
    if (pace === undefined) return;
    this.#paceOf.delete(subscriber);
    if (subscriber.internal !== true) this.#pacedClients -= 1;
    const key = groupKey(pace.interval, pace.threshold);
    const group = this.#groups.get(key);
    group?.members.delete(subscriber);
    if (group !== undefined && group.members.size === 0) {
      group.stop();
      this.#groups.delete(key);
    }
  }
}

const NO_STATE: PacedState = { state: undefined, epoch: '', seq: 0 };

/** One group per (interval, threshold); a threshold is compared in its one (validated) spelling. */
function groupKey(interval: number | undefined, threshold: string | undefined): string {
  return `${interval ?? ''}/${threshold ?? ''}`;
}
