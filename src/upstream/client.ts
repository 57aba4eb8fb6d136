/**
 * @module upstream/client
 * The typed upstream client: one method per row of the endpoint table (endpoints.ts), each resolving
 * to the type of its zod schema, all sent through one transport (transport.ts: caps, retries,
 * timeouts, validation).
 */
import { endpointMethods } from './endpoint.ts';
import { endpoints } from './endpoints.ts';
import type { HttpRequest } from './exchange.ts';
import { type CallInit, UpstreamTransport, type UpstreamTransportOptions } from './transport.ts';

export type { HttpRequest } from './exchange.ts';
export { ResponseMemo } from './outcome.ts';
export type { CallInit, UpstreamRequestEvent } from './transport.ts';
export type UpstreamClientOptions = UpstreamTransportOptions;

/** The endpoint methods alone, as `singleAttempt()` gives them. */
export const UpstreamEndpoints = endpointMethods(endpoints);
export type UpstreamEndpoints = InstanceType<typeof UpstreamEndpoints>;

export class UpstreamClient extends UpstreamEndpoints {
  readonly events: UpstreamTransport['events'];
  readonly #transport: UpstreamTransport;

  constructor(options: UpstreamClientOptions) {
    const transport = new UpstreamTransport(options);
    super(transport);
    this.#transport = transport;
    this.events = transport.events;
  }

  /** One request passed through as it is, inside the caps (transport.ts `forward`). */
  forward(request: HttpRequest, init?: CallInit): Promise<{ status: number; text: string }> {
    return this.#transport.forward(request, init);
  }

  /**
   * The same endpoints through the same transport (caps, budget, events), each call one attempt:
   * for polls, whose next poll is their retry, so that a failing upstream gets one request per poll
   * and a retry never overlaps the next poll (docs/scheduler.md "Rate limits").
   */
  singleAttempt(): UpstreamEndpoints {
    const transport = this.#transport;
    return new UpstreamEndpoints({ call: (request, init) => transport.call(request, init, 0) });
  }

  /** Load snapshot for metrics and the status page. */
  load(): { inFlight: number; queued: number } {
    return this.#transport.load();
  }

  /** Aborts every waiting and running call (they reject with UpstreamError) and closes the pool. */
  close(): Promise<void> {
    return this.#transport.close();
  }
}
