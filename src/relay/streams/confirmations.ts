/**
 * @module relay/confirmations
 * Every `confirmMs`, each stream whose state upstream confirmed since its subscribers last heard
 * of it sends them one `confirmed` message (protocol.md "`confirmed`"), so a client tells a quiet
 * stream (confirmed unchanged at T) from a stalled one. The message is encoded once per stream for
 * all its subscribers; a stream that sent an update in the period says nothing more (the update's
 * `rts` is its confirmation).
 */
import type { StreamRegistry } from './registry.ts';

export class ConfirmationAnnouncer {
  readonly #registry: StreamRegistry;
  readonly #periodMs: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(registry: StreamRegistry, periodMs: number) {
    this.#registry = registry;
    this.#periodMs = periodMs;
  }

  start(): void {
    if (this.#timer !== undefined || this.#periodMs <= 0) return;
    this.#timer = setInterval(() => this.announce(), this.#periodMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One round: returns how many streams sent a `confirmed`. */
  announce(): number {
    let sent = 0;
    for (const stream of this.#registry.streams()) if (stream.announceConfirmation()) sent += 1;
    return sent;
  }
}
