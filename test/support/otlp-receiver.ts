/**
 * @module test/support/otlp-receiver
 * A small OTLP/HTTP receiver for trace tests, on port 0: it accepts `POST /v1/traces` in the JSON
 * encoding (the one the relay's exporter sends) and keeps every span, flattened, with its
 * attributes as plain values.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** One span as received, its attributes as plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a trace's root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's numbering: 1 internal, 3 client. */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, string | number | boolean | unknown[]>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: number;
}

export interface OtlpReceiver {
  /** The base URL, e.g. http://127.0.0.1:41234 (the exporter adds `/v1/traces`). */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Requests refused: a path or method other than `POST /v1/traces`, or a body that is not OTLP JSON. */
  readonly refused: string[];
  close(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: { key: string; value: AnyValue }[];
  status?: { code?: number };
}

interface OtlpTraces {
  resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const refused: string[] = [];
  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    if (request.method !== 'POST' || request.url !== '/v1/traces') {
      refused.push(`${request.method} ${request.url}`);
      response.writeHead(404).end();
      return;
    }
    try {
      const traces = JSON.parse(body.toString('utf8')) as OtlpTraces;
      for (const resource of traces.resourceSpans)
        for (const scope of resource.scopeSpans) for (const span of scope.spans) spans.push(flatten(span));
    } catch (error) {
      refused.push(`not OTLP JSON: ${String(error)}`);
      response.writeHead(400).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    refused,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request as AsyncIterable<Buffer>) chunks.push(chunk);
  const body = Buffer.concat(chunks);
  return request.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
}

function flatten(span: OtlpSpan): ReceivedSpan {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId ?? '',
    name: span.name,
    kind: span.kind,
    startNs: BigInt(span.startTimeUnixNano),
    endNs: BigInt(span.endTimeUnixNano),
    attributes: Object.fromEntries((span.attributes ?? []).map(({ key, value }) => [key, plain(value)])),
    status: span.status?.code ?? 0,
  };
}

function plain(value: AnyValue): string | number | boolean | unknown[] {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  return (value.arrayValue?.values ?? []).map(plain);
}
