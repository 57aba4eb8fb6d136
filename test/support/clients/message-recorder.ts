/**
 * @module test/support/clients/message-recorder
 * What the plain protocol clients of the tests (WebSocket and SSE) share: they record every
 * message, keep each stream's state from snapshot + updates with the pure core, and check seq
 * continuity and checksums themselves, so the tests check the relay without the client SDK.
 */

import jsonPatch, { type Operation } from 'fast-json-patch';
import {
  applyCandlesUpdate,
  candlesChecksum,
} from '../../../packages/protocol/src/channels/candles/candles.ts';
import { applyMarketUpdate } from '../../../packages/protocol/src/channels/market/wire.ts';
import { applyMarketsUpdate } from '../../../packages/protocol/src/channels/markets/wire.ts';
import { applyOracleUpdate } from '../../../packages/protocol/src/channels/oracle/oracle.ts';
import { applyPriceUpdate } from '../../../packages/protocol/src/channels/price/price.ts';
import { applyProbabilitiesUpdate } from '../../../packages/protocol/src/channels/probabilities/probabilities.ts';
import { streamKey } from '../../../packages/protocol/src/channels/stream-key.ts';
import { applyTradesUpdate } from '../../../packages/protocol/src/channels/trades/trades.ts';
import {
  applyBookUpdate,
  type BookState,
  bookChecksum,
} from '../../../packages/protocol/src/protocol/book.ts';
import { restChecksum } from '../../../packages/protocol/src/protocol/json-patch.ts';
import type {
  CandlesData,
  Channel,
  ChannelData,
  JsonValue,
} from '../../../packages/protocol/src/protocol/messages.ts';
import { applyOrdersUpdate } from '../channels/orders-state.ts';

/** Each channel's state as a client keeps it (`book`: the sorted levels). */
type ClientState<C extends Channel> = C extends 'book' ? BookState : ChannelData[C]['snapshot'];

/** How a client applies each channel's update to its state. */
const applyUpdate: {
  [C in Channel]: (state: ClientState<C>, update: ChannelData[C]['update']) => ClientState<C>;
} = {
  book: applyBookUpdate,
  price: applyPriceUpdate,
  trades: applyTradesUpdate,
  market: applyMarketUpdate,
  probabilities: applyProbabilitiesUpdate,
  oracle: applyOracleUpdate,
  orders: applyOrdersUpdate,
  markets: applyMarketsUpdate,
  // A stock RFC 6902 library, as a client of any language would apply it.
  rest: (state, patch) =>
    jsonPatch.applyPatch(structuredClone(state), patch as Operation[], true, false, false)
      .newDocument as JsonValue,
  candles: applyCandlesUpdate,
};

function applied<C extends Channel>(channel: C, state: unknown, update: unknown): unknown {
  // The recorder takes the wire as it comes; the channel names which types its data has.
  return applyUpdate[channel](state as ClientState<C>, update as ChannelData[C]['update']);
}

export type Message = Record<string, unknown> & { type: string };

/**
 * The `seq` of the state an `update` applies to: a paced subscription's conflated update names it
 * in `prev_seq`, any other is the one before its own (docs/protocol.md "Sequencing").
 */
export function appliesTo(message: Message): number {
  return typeof message.prev_seq === 'number' ? message.prev_seq : (message.seq as number) - 1;
}

export interface StreamView {
  epoch: string;
  seq: number;
  ts: string;
  /** The channel's state as a client keeps it (cast to the channel's type where read). */
  state: unknown;
  /** Number of updates applied since the last snapshot. */
  updates: number;
}

export class MessageRecorder {
  readonly messages: Message[] = [];
  readonly streams = new Map<string, StreamView>();
  /** Problems seen while applying messages: a seq gap, a checksum mismatch, an update without snapshot. */
  readonly violations: string[] = [];

  static key(channel: string, market: string, depth?: number | null, group?: string): string {
    return streamKey(channel, market, depth, group);
  }

  /** A grouped book's view: name its `group` step. */
  view(channel: string, market: string, depth?: number | null, group?: string): StreamView | undefined {
    return this.streams.get(MessageRecorder.key(channel, market, depth, group));
  }

  of(type: string): Message[] {
    return this.messages.filter((message) => message.type === type);
  }

  protected record(message: Message): void {
    this.messages.push(message);
    if (message.type !== 'snapshot' && message.type !== 'update') return;
    const key = MessageRecorder.key(
      message.channel as string,
      (message.channel === 'rest' ? message.path : message.market) as string,
      message.depth as number | null,
      message.group as string | undefined,
    );
    const epoch = message.epoch as string;
    const seq = message.seq as number;
    if (message.type === 'snapshot') {
      this.streams.set(key, {
        epoch,
        seq,
        ts: message.ts as string,
        state: message.data as BookState,
        updates: 0,
      });
    } else {
      const view = this.streams.get(key);
      if (view === undefined) {
        this.violations.push(`${key}: update seq ${seq} before any snapshot`);
        return;
      }
      if (view.epoch !== epoch || appliesTo(message) !== view.seq) {
        this.violations.push(`${key}: update ${epoch}/${seq} after ${view.epoch}/${view.seq}`);
      }
      view.state = applied(message.channel as Channel, view.state, message.data);
      view.seq = seq;
      view.ts = message.ts as string;
      view.updates += 1;
    }
    if (message.channel === 'book' || message.channel === 'rest' || message.channel === 'candles') {
      const view = this.streams.get(key)!;
      const expected =
        message.channel === 'book'
          ? bookChecksum(view.state as BookState)
          : message.channel === 'candles'
            ? candlesChecksum(view.state as CandlesData)
            : restChecksum(view.state as JsonValue);
      if (message.checksum !== expected) {
        this.violations.push(`${key}: checksum ${String(message.checksum)} != ${expected} at seq ${seq}`);
      }
    }
  }
}
