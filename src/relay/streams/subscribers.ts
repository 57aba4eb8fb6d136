/**
 * @module relay/streams/subscribers
 * A stream's subscribers, with the relay's own (`internal`: a session following the catalogue for
 * its wildcards) counted apart as they come and go, so the clients a frame goes to are known
 * without walking the set on every publish.
 */
export class Subscribers<Subscriber extends { readonly internal?: boolean }> extends Set<Subscriber> {
  #internal = 0;

  /** The subscribers that are clients: each frame is one message to each. */
  get clients(): number {
    return this.size - this.#internal;
  }

  override add(subscriber: Subscriber): this {
    if (subscriber.internal === true && !this.has(subscriber)) this.#internal += 1;
    return super.add(subscriber);
  }

  override delete(subscriber: Subscriber): boolean {
    const held = super.delete(subscriber);
    if (held && subscriber.internal === true) this.#internal -= 1;
    return held;
  }

  override clear(): void {
    this.#internal = 0;
    super.clear();
  }
}
