/**
 * @module upstream/client
 * The typed upstream client: one method per row of the endpoint table (endpoints.ts), each resolving
 * to the type of its zod schema, all sent through one transport (transport.ts: caps, retries,
 * timeouts, validation).
 */
import type { CanonicalRestPath } from '../../packages/protocol/src/protocol/rest-paths.ts';
import { endpointMethods } from './endpoint.ts';
import { endpoints } from './endpoints.ts';
import { UpstreamError, UpstreamHttpError } from './errors.ts';
import type { HttpRequest } from './exchange.ts';
import { type CallInit, UpstreamTransport, type UpstreamTransportOptions } from './transport.ts';

export type { HttpRequest } from './exchange.ts';
export { ResponseMemo } from './outcome.ts';
export type { CallInit, UpstreamRequestEvent } from './transport.ts';
export type UpstreamClientOptions = UpstreamTransportOptions;
/** A public GET, as the `rest` channel asks for it. */
type PublicRequest = Pick<CanonicalRestPath, 'template' | 'pathname' | 'query'>;

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
   * and a retry never overlaps the next poll (docs/scheduler.md "Rate limits"). `publicBody` is one
   * attempt already.
   */
  singleAttempt(): UpstreamEndpoints & Pick<UpstreamClient, 'publicBody'> {
    const transport = this.#transport;
    const endpoints = new UpstreamEndpoints({ call: (request, init) => transport.call(request, init, 0) });
    return Object.assign(endpoints, {
      publicBody: (request: PublicRequest, init?: CallInit) => this.publicBody(request, init),
    });
  }

  /**
   * A public GET's body exactly as upstream served it, parsed but not passed through a schema, so
   * no field is dropped or retyped (the `rest` channel). A non-2xx answer rejects with
   * UpstreamHttpError: a 404 is the path's resource not existing (a user, a market).
   */
  async publicBody(request: PublicRequest, init?: CallInit): Promise<unknown> {
    const endpoint = `GET ${request.template}`;
    const { status, text } = await this.forward(
      { endpoint, method: 'GET', path: request.pathname, query: request.query },
      init,
    );
    if (status < 200 || status > 299) throw new UpstreamHttpError(endpoint, status);
    try {
      return JSON.parse(text);
    } catch (cause) {
      throw new UpstreamError(endpoint, 'the body is not JSON', { cause });
    }
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
