/**
 * @module relay/session/current-snapshot
 * A stream's current state for one request (`GET /v1/book/:market`): the snapshot the stream
 * already holds, or, for a stream nobody watches yet, the first one its polls produce. The request
 * subscribes like a connection and leaves at once, so the stream lingers a few seconds and a client
 * that polls the relay is answered from live state on its next request.
 */

import type { MarketAdmission } from '../admission/market.ts';
import type { Frame } from '../streams/frame.ts';
import type { StreamRegistry } from '../streams/registry.ts';
import type { AnyStream, StreamSubscriber } from '../streams/stream.ts';
import type { StreamIdentity } from '../streams/stream-identity.ts';

export type SnapshotAnswer =
  | { kind: 'snapshot'; frame: Frame }
  | { kind: 'unknown_market' }
  | { kind: 'unavailable' };

export function currentSnapshot(
  registry: StreamRegistry,
  admission: MarketAdmission,
  identity: StreamIdentity,
  timeoutMs: number,
): Promise<SnapshotAnswer> {
  return new Promise((resolve) => {
    let stream: AnyStream | undefined;
    let timer: NodeJS.Timeout | undefined;
    const finish = (answer: SnapshotAnswer): void => {
      clearTimeout(timer);
      if (stream !== undefined) registry.unsubscribe(subscriber, stream);
      admission.close(subscriber);
      resolve(answer);
    };
    const subscriber: StreamSubscriber = {
      deliver: (from) => finish({ kind: 'snapshot', frame: from.snapshotFrame() }),
      notify: () => undefined,
      ended: (from) => finish(from.hasState ? { kind: 'unavailable' } : { kind: 'unknown_market' }),
    };
    // Judged like a WebSocket subscribe: an id upstream's catalogue does not list costs no poll.
    admission.open(subscriber, undefined);
    const refusal = admission.admit(subscriber, identity.channel, [identity.market]).get(identity.market);
    if (refusal !== undefined) {
      finish(refusal.code === 'unknown_market' ? { kind: 'unknown_market' } : { kind: 'unavailable' });
      return;
    }
    timer = setTimeout(() => finish({ kind: 'unavailable' }), timeoutMs);
    stream = registry.subscribe(subscriber, identity);
    if (stream.hasState) finish({ kind: 'snapshot', frame: stream.snapshotFrame() });
  });
}
