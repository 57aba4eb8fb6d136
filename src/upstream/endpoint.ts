/**
 * @module upstream/endpoint
 * How a row of the endpoint table (endpoints.ts) becomes a typed client method: the row's argument
 * checker gives the method its parameters, its zod schema the type it resolves to, and every method
 * hands its request to the one transport.
 */
import type { z } from 'zod';
import type { ErrorCode } from '../protocol/messages.ts';
import type { QueryValue } from './exchange.ts';
import type { UpstreamRequest } from './outcome.ts';
import type { CallInit } from './transport.ts';

type RouteTemplate = `${'GET' | 'POST'} /${string}`;

/** The `:name` parameters of a path template, e.g. `'id'` for `/api/markets/:id/history`. */
type ParamNames<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;

/** Where the checked arguments go; a template with parameters requires a value for each. */
type RequestParts<R extends string> = { query?: Record<string, QueryValue>; body?: unknown } & ([
  ParamNames<R>,
] extends [never]
  ? { params?: undefined }
  : { params: Record<ParamNames<R>, string> });

export interface EndpointSpec<R extends RouteTemplate, A extends unknown[], T> {
  /** Method and path template; also the name errors, events and metrics give the endpoint. */
  route: R;
  response: z.ZodType<T>;
  /** Protocol code for a 404 when the endpoint is not about one market (default `unknown_market`). */
  notFound?: ErrorCode;
  /** How many arguments `request` takes: the method's optional CallInit comes right after them. */
  arity: Required<A>['length'];
  /**
   * Checks the caller's arguments (throwing UpstreamInvalidArgumentError, before any request) and
   * places them; path parameters must come back validated and encoded.
   */
  request: (endpoint: R, ...args: A) => RequestParts<R>;
}

export interface Endpoint<A extends unknown[], T> {
  readonly arity: number;
  // Method syntax on purpose: rows with different argument lists then share one table type.
  prepare(args: A): UpstreamRequest<T>;
}

export function endpoint<const R extends RouteTemplate, A extends unknown[], T>(
  spec: EndpointSpec<R, A, T>,
): Endpoint<A, T> {
  const space = spec.route.indexOf(' ');
  const method = spec.route.slice(0, space) === 'POST' ? 'POST' : 'GET';
  const template = spec.route.slice(space + 1);
  return {
    arity: spec.arity,
    prepare(args) {
      const parts = spec.request(spec.route, ...args);
      const params: Partial<Record<string, string>> = parts.params ?? {};
      return {
        endpoint: spec.route,
        method,
        path: template.replace(/:(\w+)/g, (_match, name: string) => params[name] ?? ''),
        query: parts.query,
        body: parts.body,
        schema: spec.response,
        notFoundCode: spec.notFound,
      };
    },
  };
}

type EndpointTable = Record<string, Endpoint<unknown[], unknown>>;

export type EndpointMethods<Table extends EndpointTable> = {
  [K in keyof Table]: Table[K] extends Endpoint<infer A, infer T>
    ? (...args: [...A, init?: CallInit]) => Promise<T>
    : never;
};

/** What the derived methods send through. */
export interface Caller {
  call<T>(request: UpstreamRequest<T>, init: CallInit | undefined): Promise<T>;
}

/** A base class with one method per row of `table`, each sending through the given Caller. */
export function endpointMethods<Table extends EndpointTable>(
  table: Table,
): new (
  caller: Caller,
) => EndpointMethods<Table> {
  class Endpoints {
    readonly #caller: Caller;

    constructor(caller: Caller) {
      this.#caller = caller;
    }

    static {
      for (const [name, row] of Object.entries(table)) {
        Object.defineProperty(Endpoints.prototype, name, {
          // Async, so a rejected argument is a rejected promise like every other failure.
          async value(this: Endpoints, ...args: unknown[]): Promise<unknown> {
            const init = args[row.arity];
            return this.#caller.call(
              row.prepare(args.slice(0, row.arity)),
              isCallInit(init) ? init : undefined,
            );
          },
          writable: true,
          configurable: true,
        });
      }
    }
  }
  // The methods are installed above from the same table the type is mapped from.
  return Endpoints as unknown as new (
    caller: Caller,
  ) => EndpointMethods<Table>;
}

function isCallInit(value: unknown): value is CallInit {
  return typeof value === 'object' && value !== null;
}
