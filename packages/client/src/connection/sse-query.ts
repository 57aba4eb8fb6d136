/**
 * @module client/connection/sse-query
 * The query of an SSE response (protocol.md "Server-Sent Events") from a `subscribe`'s options:
 * which options the relay's SSE takes as query parameters, their text, and which of them name a
 * stream rather than how one subscriber gets it. `sse-socket.ts` keys its responses by them.
 */
import { hasDepths } from '../../../protocol/src/channels/registry.ts';
import type { BookDepth, SubscribeRequest } from '../../../protocol/src/protocol/messages.ts';

/**
 * The `subscribe` options the relay's SSE takes as query parameters of the same names, in the order
 * they key a response: each one's query text (a full book's depth is null: `full`), and whether it
 * names the stream (a book at another depth is another stream) or only says how this subscriber
 * gets it (asked again with another value, the stream moves to that value's response). A new
 * option is one line here.
 */
const queryOptions = {
  depth: { text: (depth: BookDepth) => (depth === null ? 'full' : String(depth)), namesStream: true },
  group: { text: String, namesStream: true },
  interval: { text: String, namesStream: false },
  threshold: { text: String, namesStream: false },
  since: { text: String, namesStream: false },
} satisfies {
  [Option in keyof SubscribeRequest]?: { text: (value: never) => string; namesStream: boolean };
};

type QueryOption = keyof typeof queryOptions;
export type QueryOptions = Pick<SubscribeRequest, QueryOption>;
const queryOptionNames = Object.keys(queryOptions) as QueryOption[];

/** The options of a request that key its response (a book's full depth as null). */
export function optionsOf(request: { channel: string } & QueryOptions): QueryOptions {
  const options: QueryOptions = Object.fromEntries(
    queryOptionNames.flatMap((name) => (request[name] === undefined ? [] : [[name, request[name]]])),
  );
  if (hasDepths(request.channel)) options.depth = request.depth ?? null;
  return options;
}

/** The query parameters of a response's options, in `queryOptions` order. */
export function queryEntries(options: QueryOptions): [QueryOption, string][] {
  return queryOptionNames.flatMap((name) => {
    const value = options[name];
    if (value === undefined) return [];
    // Each function takes its own option's value: TypeScript cannot pair them through `name`.
    const text = queryOptions[name].text as (value: QueryOptions[QueryOption]) => string;
    return [[name, text(value)]];
  });
}

/** What of a response's options names its streams: a stream is in one response of those at most. */
export function streamOptionsKey(options: QueryOptions): string {
  return JSON.stringify(queryEntries(options).filter(([name]) => queryOptions[name].namesStream));
}
