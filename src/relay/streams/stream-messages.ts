/**
 * @module relay/streams/stream-messages
 * Every message a stream sends about itself, as the wire has it (protocol.md "Server messages"):
 * its `snapshot` and `update`, `confirmed`, `status`, and the errors a subscription to it may get.
 * Built here from the stream's identity and position, so the stream (relay/streams/stream.ts)
 * keeps its sequence, state and subscribers. Each message's fields are in the order the wire shows.
 */
import { streamIdNoun } from '../../../packages/protocol/src/protocol/channels.ts';
import type {
  BookDepth,
  Channel,
  ConfirmedMessage,
  ErrorMessage,
  ServerMessage,
  StatusMessage,
  StreamState,
} from '../../../packages/protocol/src/protocol/messages.ts';

/**
 * The stream a message is about; a book's depth is named in each of its messages. `depth` is
 * undefined exactly on a channel without depths (null: a book's full depth), as a stream reads it
 * from its channel's definition once, when it is made, so no message asks the channel again.
 */
export interface MessageSubject {
  readonly channel: Channel;
  readonly market: string;
  readonly depth: BookDepth | undefined;
  readonly group?: string | undefined;
}

/** Where a `snapshot` or `update` sits in its stream, and the times of the state it carries. */
export interface MessagePosition {
  epoch: string;
  seq: number;
  ts: string;
  rts: string;
}

/**
 * A `snapshot` or `update` at `at`, `checksum` being that of the state after it; `prevSeq`: the
 * `seq` a conflated update applies to, when that is not the one before it (a paced group's).
 */
export function dataMessage(
  subject: MessageSubject,
  type: 'snapshot' | 'update',
  data: unknown,
  at: MessagePosition,
  checksum: number | undefined,
  prevSeq?: number,
): ServerMessage {
  // The cast is the one place where the generic state meets the wire types; the codecs
  // registered in relay/channels/codecs.ts pair each channel with its data shape.
  return {
    type,
    channel: subject.channel,
    market: subject.market,
    epoch: at.epoch,
    seq: at.seq,
    ...(prevSeq === undefined ? {} : { prev_seq: prevSeq }),
    ts: at.ts,
    rts: at.rts,
    ...depthOf(subject),
    ...groupOf(subject),
    data,
    ...(checksum === undefined ? {} : { checksum }),
  } as ServerMessage;
}

/** Upstream confirmed the state at `seq` of `epoch` when the relay received `confirmed`. */
export function confirmedMessage(
  subject: MessageSubject,
  epoch: string,
  seq: number,
  confirmed: string,
): ConfirmedMessage {
  return {
    type: 'confirmed',
    channel: subject.channel,
    market: subject.market,
    ...depthOf(subject),
    ...groupOf(subject),
    epoch,
    seq,
    confirmed,
  };
}

export function statusMessage(subject: MessageSubject, state: StreamState, reason?: string): StatusMessage {
  return {
    type: 'status',
    channel: subject.channel,
    market: subject.market,
    ...depthOf(subject),
    ...groupOf(subject),
    state,
    ...(reason === undefined ? {} : { reason }),
  };
}

/** A book's depth, named in each of its messages; nothing on a channel without depths. */
export function depthOf(subject: { readonly depth: BookDepth | undefined }): { depth?: BookDepth } {
  return subject.depth === undefined ? {} : { depth: subject.depth };
}

/** A grouped book's step, named in each of its messages beside its depth. */
export function groupOf(subject: { readonly group?: string | undefined }): { group?: string } {
  return subject.group === undefined ? {} : { group: subject.group };
}

/** A subscription that never got its first state could not be served at all. */
export function upstreamUnavailableError(subject: MessageSubject, reason: string | undefined): ErrorMessage {
  return {
    type: 'error',
    code: 'upstream_unavailable',
    message: `upstream is unavailable${reason === undefined ? '' : `: ${reason}`}`,
    channel: subject.channel,
    market: subject.market,
  };
}

/**
 * What a subscriber to a stream id upstream does not have (a market, a feed, a path) is told
 * (protocol.md "Error codes").
 */
export function unknownMarketError(channel: Channel, market: string): ErrorMessage {
  return {
    type: 'error',
    code: 'unknown_market',
    message: `${streamIdNoun(channel)} ${market} does not exist upstream`,
    channel,
    market,
  };
}
