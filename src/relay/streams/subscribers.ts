/**
 * @module relay/streams/subscribers
 * A stream's subscribers, with the relay's own (`internal`: a session following the catalogue for
 * its wildcards) counted apart as they come and go, so the clients a frame goes to are known
 * without walking the set on every publish. Those that asked for an `interval` are held apart in
 * one paced group per interval (./paced.ts): the raw set a change is fanned out to holds only the
 * others, so pacing adds nothing to a raw subscriber's delivery.
 */
import { PacedGroup } from './paced.ts';

export class Subscribers<Subscriber extends { readonly internal?: boolean }> extends Set<Subscriber> {
  #internal = 0;
  /** Clients (not internal) held in a paced group. */
  #pacedClients = 0;
  /** The subscribers each change goes to at once. */
  readonly #raw = new Set<Subscriber>();
  readonly #groups = new Map<number, PacedGroup<Subscriber>>();
  readonly #intervalOf = new Map<Subscriber, number>();
  readonly #sendPaced: (members: ReadonlySet<Subscriber>) => void;

  /** `sendPaced`: hands the stream's current state to a paced group's members. */
  constructor(sendPaced: (members: ReadonlySet<Subscriber>) => void = () => {}) {
    super();
    this.#sendPaced = sendPaced;
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
    return this.#intervalOf.get(subscriber);
  }

  /** The stream changed: each paced group sends now or at the end of its interval. */
  changed(): void {
    if (this.#groups.size === 0) return;
    for (const group of this.#groups.values()) group.changed();
  }

  override add(subscriber: Subscriber): this {
    if (this.has(subscriber)) return this;
    if (subscriber.internal === true) this.#internal += 1;
    this.#raw.add(subscriber);
    return super.add(subscriber);
  }

  /** Paces a subscriber held here at `interval`, or (undefined) gives it every change again. */
  pace(subscriber: Subscriber, interval: number | undefined): void {
    if (!this.has(subscriber) || this.#intervalOf.get(subscriber) === interval) return;
    this.#unpace(subscriber);
    if (interval === undefined) {
      this.#raw.add(subscriber);
      return;
    }
    this.#raw.delete(subscriber);
    let group = this.#groups.get(interval);
    if (group === undefined) {
      group = new PacedGroup(interval, this.#sendPaced);
      this.#groups.set(interval, group);
    }
    group.members.add(subscriber);
    this.#intervalOf.set(subscriber, interval);
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
    this.#intervalOf.clear();
    super.clear();
  }

  #unpace(subscriber: Subscriber): void {
    const interval = this.#intervalOf.get(subscriber);
    if (interval === undefined) return;
    this.#intervalOf.delete(subscriber);
    if (subscriber.internal !== true) this.#pacedClients -= 1;
    const group = this.#groups.get(interval);
    group?.members.delete(subscriber);
    if (group !== undefined && group.members.size === 0) {
      group.stop();
      this.#groups.delete(interval);
    }
  }
}
