/**
 * @module relay/streams/subscribers
 * A stream's subscribers, with the relay's own (`internal`: a session following the catalogue for
 * its wildcards) counted apart as they come and go, so the clients a frame goes to are known
 * without walking the set on every publish. Those that asked for an `interval` or a `threshold`
 * are held apart in one paced group per (interval, threshold) (./paced.ts): the raw set a change is
 * fanned out to holds only the others, so pacing adds nothing to a raw subscriber's delivery, and a
 * group's frame is built once for all its members.
 *
 * What a paced group is sent in place of every message (`ConflatedFrames`, docs/protocol.md
 * "Per-subscription options"): the change from the state it was last sent to the stream's current
 * one, as one `update` naming that state's `seq` as `prev_seq`, built with the channel's own diff,
 * so its checksum and the state a client rebuilds are the ones every subscriber of the stream has.
 * A slow reader's session holds its streams back on its own (relay/session/slow-consumer.ts).
 */
import { type StreamCodec, sendWhole } from '../channels/codecs.ts';
import { dataMessage, type Frame, type MessagePosition, type MessageSubject, toFrame } from './frame.ts';
import { type Pace, PacedGroup, type PacedState, type SendPaced } from './paced.ts';

/** What a stream (of type `S`) needs from a connection subscribed to it. */
export interface SubscriberOf<S> {
  /** A `snapshot` or `update` of this stream; the subscriber may hold it back (conflation). */
  deliver(stream: S, frame: Frame, kind: 'snapshot' | 'update'): void;
  /** A `status` or `error` about this stream, never held back. */
  notify(stream: S, frame: Frame): void;
  /** The stream ended (closed upstream); the subscription is gone. */
  ended(stream: S): void;
  /**
   * The relay's own subscriber, no client (a session following the catalogue for its wildcards):
   * what it is handed is no message sent, and it is no subscription in the counts.
   */
  readonly internal?: boolean;
  /** An internal subscriber's connection: whose share of the upstream budget its streams take. */
  readonly behalfOf?: SubscriberOf<S>;
  /**
   * Its transport compresses each message (permessage-deflate): the stream deflates each update
   * once before handing it down, so no transport calls back for it.
   */
  readonly deflates?: boolean;
}

export class Subscribers<
  Subscriber extends { readonly internal?: boolean; readonly deflates?: boolean },
> extends Set<Subscriber> {
  #internal = 0;
  #deflating = 0;
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

  /** The subscribers whose transport compresses each message (`StreamSubscriber.deflates`). */
  get deflating(): number {
    return this.#deflating;
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
    if (subscriber.deflates === true) this.#deflating += 1;
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
    if (subscriber.deflates === true) this.#deflating -= 1;
    this.#raw.delete(subscriber);
    this.#unpace(subscriber);
    return true;
  }

  override clear(): void {
    this.#internal = 0;
    this.#deflating = 0;
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

/** The stream's current state and where it stands. */
export interface CurrentState<State> extends MessagePosition {
  readonly state: State;
}

/** One stream's frames for its paced groups. */
export class ConflatedFrames<State, Delta> {
  readonly #subject: MessageSubject & { readonly idsArePaths: boolean };
  readonly #codec: StreamCodec<State, Delta>;
  /** The stream's last ordinary update, and the same bytes marked as applying to the seq before it. */
  #lastUpdate: Frame | undefined;
  #lastUpdateForGroups: Frame | undefined;

  constructor(subject: MessageSubject & { readonly idsArePaths: boolean }, codec: StreamCodec<State, Delta>) {
    this.#subject = subject;
    this.#codec = codec;
  }

  /** The stream sent `frame` to its raw subscribers (an update) or started over (anything else). */
  published(frame: Frame | undefined): void {
    this.#lastUpdate = frame;
    this.#lastUpdateForGroups = undefined;
  }

  /**
   * The update from `sent` to `current`. A group one change behind gets the stream's own update
   * (its bytes, no diff or serialising again: without `prev_seq` it applies to the seq before it).
   * The snapshot where no update can say the change (another epoch, a codec that sends this
   * change whole, a change back to the same content) or where it is the smaller message.
   */
  changeSince(sent: PacedState, current: CurrentState<State>, snapshot: () => Frame): Frame {
    if (sent.epoch !== current.epoch || sent.seq >= current.seq || sent.state === undefined)
      return snapshot();
    const last = this.#lastUpdate;
    if (
      sent.seq === current.seq - 1 &&
      last?.position?.seq === current.seq &&
      last.position.epoch === current.epoch
    ) {
      this.#lastUpdateForGroups ??= last.applyingTo({ epoch: sent.epoch, seq: sent.seq });
      return this.#lastUpdateForGroups;
    }
    const delta = this.#codec.diff(sent.state as State, current.state);
    if (delta === null || delta === sendWhole) return snapshot();
    const message = dataMessage(
      this.#subject,
      'update',
      delta,
      current,
      this.#codec.checksum?.(current.state),
      sent.seq,
    );
    const update = toFrame(message, this.#subject.idsArePaths);
    // Whichever is smaller: a member can always apply a snapshot, and a second of a busy book can
    // change more levels than it has.
    return update.bytes.length > snapshot().bytes.length ? snapshot() : update;
  }
}
