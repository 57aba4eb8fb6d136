/**
 * @module bench/lib/otlp-sink
 * An OTLP/HTTP receiver that accepts every batch of spans and drops it, in the bench's own process:
 * what a relay tracing to a collector costs, without the collector's work on the measured machine's
 * relay process.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OtlpSink {
  /** Its base URL, for `--otel-endpoint`. */
  readonly url: string;
  /** Batches received. */
  readonly batches: () => number;
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  let batches = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      batches += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    batches: () => batches,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
