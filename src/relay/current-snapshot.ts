/**
 * @module relay/current-snapshot
 * A stream's current state for one request (`GET /v1/book/:market`): the snapshot the stream
 * already holds, or, for a stream nobody watches yet, the first one its polls produce. The request
 * subscribes like a connection and leaves at once, so the stream lingers a few seconds and a client
 * that polls the relay is answered from live state on its next request.
 */
import type { Frame } from './frame.ts';
import type { StreamRegistry } from './registry.ts';
import type { AnyStream, StreamIdentity, StreamSubscriber } from './stream.ts';

export type SnapshotAnswer =
  | { kind: 'snapshot'; frame: Frame }
  | { kind: 'unknown_market' }
  | { kind: 'unavailable' };

export function currentSnapshot(
  registry: StreamRegistry,
  identity: StreamIdentity,
  timeoutMs: number,
): Promise<SnapshotAnswer> {
  if (registry.unknownMarkets.has(identity.market)) return Promise.resolve({ kind: 'unknown_market' });
  return new Promise((resolve) => {
    let stream: AnyStream | undefined;
    const finish = (answer: SnapshotAnswer): void => {
      clearTimeout(timer);
      if (stream !== undefined) registry.unsubscribe(subscriber, stream);
      resolve(answer);
    };
    const subscriber: StreamSubscriber = {
      deliver: (from) => finish({ kind: 'snapshot', frame: from.snapshotFrame() }),
      notify: () => undefined,
      ended: (from) => finish(from.hasState ? { kind: 'unavailable' } : { kind: 'unknown_market' }),
    };
    const timer = setTimeout(() => finish({ kind: 'unavailable' }), timeoutMs);
    stream = registry.subscribe(subscriber, identity);
    if (stream.hasState) finish({ kind: 'snapshot', frame: stream.snapshotFrame() });
  });
}
