/**
 * @module relay/session/session-context
 * What a transport gives each session it creates (relay/session/session.ts): the relay's registry,
 * market admission, events and limits, and the connection's own options; and what the session
 * sees of its transport (`SessionSink`).
 */
import type { ResumePoint } from '../../../packages/protocol/src/protocol/messages.ts';
import type { MarketAdmission } from '../admission/market.ts';
import type { RelayEvents } from '../events.ts';
import type { Frame } from '../streams/frame.ts';
import type { StreamRegistry } from '../streams/registry.ts';
import type { AnyStream } from '../streams/stream.ts';
import type { ReplayService } from './replay/replays.ts';
import type { SinceReads } from './since-reads.ts';
import type { SlowReaderLimits } from './slow-consumer.ts';

export interface SessionLimits extends SlowReaderLimits {
  /** Streams one session may hold at once. */
  maxStreams: number;
}

export interface SessionContext {
  registry: StreamRegistry;
  /** Which new markets a subscription may add (isolation limits, unknown ids). */
  marketAdmission: MarketAdmission;
  events: RelayEvents;
  limits: SessionLimits;
  /** The history reads of subscriptions with `since`; without them `since` is refused. */
  sinceReads?: SinceReads;
  /** The replays of the record (docs/protocol.md "Replay"); without them `replay` is refused. */
  replays?: ReplayService;
}

export interface SessionOptions {
  /** The API key the client presented, when the relay requires keys (isolation limits per key). */
  apiKey?: string | undefined;
  /** The client's address group (relay/admission/client-address.ts): the per-address limits and its share of the upstream budget. */
  addressGroup?: string | undefined;
  /** `compact`: `subscribed` names each stream's number (docs/protocol.md "Compact encoding"). */
  encoding?: 'json' | 'compact';
  /** The transport compresses each stream message (permessage-deflate). */
  deflate?: boolean;
  /** Called once when the session is closed: what the transport's admission counted is released. */
  onClose?: () => void;
}

/** A transport's I/O, as its session sees it. */
export interface SessionSink {
  /**
   * Bytes written but not yet taken by the client (what holding back judges); undefined once nothing
   * more is written to it. One read tells a delivery both whether to write and whether to hold back.
   */
  readonly backlog: number | undefined;
  /**
   * Writes a stream's `snapshot` or `update` in the transport's framing. `alone`: the session holds
   * no other stream, so no other stream's frame can share the write (told, so the transport asks
   * nothing of the session per write).
   */
  writeStream(stream: AnyStream, frame: Frame, alone: boolean): void;
  /** Writes a message that is never held back (an answer, an error, a status), behind what is written. */
  write(frame: Frame): void;
  /** Ends a client too slow to read, the transport's way. */
  closeSlowConsumer(): void;
  /**
   * A part of the session starts (true) or stops (false) waiting on `drained` (holding back, a
   * replay), each once: a transport may tell of drains only while one waits.
   */
  wantDrains?(wanted: boolean): void;
  /** A stream was joined for the client, its updates replayed from `resumedFrom` (when defined). */
  joined?(stream: AnyStream, resumedFrom: ResumePoint | undefined): void;
  /** The transport's request rate allowance, when it takes requests (`list`). */
  readonly requestAllowance?: { available: number; burst: number; per_second: number };
}
