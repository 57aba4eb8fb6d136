/**
 * @module upstream/endpoint
 * How a row of the endpoint table (client.ts) becomes a typed client method: the row's argument
 * checker gives the method its parameters, its zod schema the type it resolves to, and every method
 * hands its request to the one transport. Also the checks the rows run on every caller-supplied
 * value that goes into an upstream URL or body, before any request: market ids must be UUIDs
 * ("Market IDs are checked as UUIDs before they go into a URL"), batches hold 1 to 100 of them
 * (docs/upstream.md), and no argument can escape its path segment.
 */
import type { z } from 'zod';
import type { ErrorCode } from '../../packages/protocol/src/protocol/messages.ts';
import { compiledCheck } from './compiled-check.ts';
import { UpstreamInvalidArgumentError } from './errors.ts';
import type { QueryValue } from './exchange.ts';
import type { UpstreamRequest } from './outcome.ts';
import * as schemas from './schemas.ts';
import type { CallInit } from './transport.ts';

/** The `:name` parameters of a path template, e.g. `'id'` for `/api/markets/:id/history`. */
type ParamNames<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;

/** Where the checked arguments go; a path with parameters requires a value for each. */
export type RequestParts<Params extends string> = { query?: Record<string, QueryValue>; body?: unknown } & ([
  Params,
] extends [never]
  ? { params?: undefined }
  : { params: Record<Params, string> });

/**
 * The caller's arguments of one endpoint: how many there are (the method's optional CallInit comes
 * right after them) and how they are checked (throwing UpstreamInvalidArgumentError, before any
 * request) and placed; path parameters must come back validated and encoded.
 */
export interface Arguments<A extends unknown[], Params extends string> {
  readonly arity: number;
  // Method syntax on purpose: argument lists of different rows then share one table type.
  place(endpoint: string, ...args: A): RequestParts<Params>;
}

/** Arguments placed by `place`; `arity` is checked against its parameter list. */
export function args<A extends unknown[], Params extends string = never>(
  arity: Required<A>['length'],
  place: (endpoint: string, ...args: A) => RequestParts<Params>,
): Arguments<A, Params> {
  return { arity, place };
}

export interface Endpoint<A extends unknown[], T> {
  readonly method: 'GET' | 'POST';
  /** Route template, `:name` for a path parameter. */
  readonly path: string;
  readonly arity: number;
  // Method syntax, as in Arguments.
  prepare(args: A): UpstreamRequest<T>;
}

/**
 * Rows of one HTTP method. `notFound`: the protocol code for a 404 when the endpoint is not about one
 * market (default `unknown_market`).
 */
function rowsOf(method: 'GET' | 'POST') {
  return <const Path extends string, A extends unknown[], T>(
    path: Path,
    response: z.ZodType<T>,
    argumentsOf: Arguments<A, ParamNames<Path>>,
    notFound?: ErrorCode,
  ): Endpoint<A, T> => {
    // The route template names the endpoint in errors, events and metrics.
    const name = `${method} ${path}`;
    // Compiled on the row's first request, not at start: most rows are never asked.
    let compiled = false;
    let check: ((value: unknown) => value is T) | undefined;
    return {
      method,
      path,
      arity: argumentsOf.arity,
      prepare(args) {
        if (!compiled) {
          check = compiledCheck(response);
          compiled = true;
        }
        const parts = argumentsOf.place(name, ...args);
        const params: Partial<Record<string, string>> = parts.params ?? {};
        return {
          endpoint: name,
          method,
          path: path.replace(/:(\w+)/g, (_match, param: string) => params[param] ?? ''),
          query: parts.query,
          body: parts.body,
          schema: response,
          check,
          notFoundCode: notFound,
        };
      },
    };
  };
}

export const get = rowsOf('GET');
/** Every POST upstream offers publicly is a read-only query: retried like a GET. */
export const post = rowsOf('POST');

type EndpointTable = Record<string, Endpoint<unknown[], unknown>>;

export type EndpointMethods<Table extends EndpointTable> = {
  [K in keyof Table]: Table[K] extends Endpoint<infer A, infer T>
    ? (...args: [...A, init?: CallInit<T>]) => Promise<T>
    : never;
};

/** What the derived methods send through. */
export interface Caller {
  call<T>(request: UpstreamRequest<T>, init: CallInit<T> | undefined): Promise<T>;
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

/** Batch endpoints accept at most 100 ids (docs/upstream.md). */
export const MAX_BATCH_IDS = 100;

export function checkMarketId(endpoint: string, id: unknown): string {
  if (typeof id !== 'string' || !schemas.uuid.safeParse(id).success) {
    throw new UpstreamInvalidArgumentError(endpoint, `market id is not a UUID: ${show(id)}`);
  }
  return id;
}

export function checkMarketIds(endpoint: string, ids: unknown): string[] {
  if (!Array.isArray(ids) || ids.length === 0) {
    throw new UpstreamInvalidArgumentError(endpoint, 'market ids must be a non-empty array');
  }
  if (ids.length > MAX_BATCH_IDS) {
    throw new UpstreamInvalidArgumentError(endpoint, `${ids.length} market ids, at most ${MAX_BATCH_IDS}`);
  }
  return ids.map((id) => checkMarketId(endpoint, id));
}

/** Token ids are integers (docs/upstream.md, Token `id`). */
export function checkTokenId(endpoint: string, id: unknown): string {
  const text = typeof id === 'number' && Number.isSafeInteger(id) ? String(id) : id;
  if (typeof text !== 'string' || !/^\d{1,16}$/.test(text)) {
    throw new UpstreamInvalidArgumentError(endpoint, `token id is not a non-negative integer: ${show(id)}`);
  }
  return text;
}

/** Free text (usernames): percent-encoded; dot segments would still be resolved by a server, so refused. */
export function checkPathSegment(endpoint: string, name: string, value: unknown): string {
  if (typeof value !== 'string' || value === '' || value === '.' || value === '..') {
    throw new UpstreamInvalidArgumentError(endpoint, `${name} is not a usable path segment: ${show(value)}`);
  }
  return encodeURIComponent(value);
}

function show(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Feed ids are hex strings (docs/upstream.md, Token price `feed_id`). */
export function checkFeedId(endpoint: string, id: unknown): string {
  if (typeof id !== 'string' || !schemas.hexString.safeParse(id).success) {
    throw new UpstreamInvalidArgumentError(endpoint, `feed id is not a hex string: ${show(id)}`);
  }
  return id;
}

/** A market UUID, or an exchange address (hex), as `GET /api/markets/:id` accepts. */
export function checkMarketIdOrAddress(endpoint: string, id: unknown): string {
  if (typeof id === 'string' && schemas.hexString.safeParse(id).success) return id;
  return checkMarketId(endpoint, id);
}
