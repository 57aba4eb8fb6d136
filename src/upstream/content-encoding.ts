/**
 * @module upstream/content-encoding
 * Decodes a response body by its `Content-Encoding` (RFC 9110 section 8.4): the codings the relay
 * asks for (`gzip, br`) and those a server or CDN may send unasked (`deflate`, `x-gzip`). A body
 * that inflates to at most SYNC_MAX_DECODED_BYTES is decoded at once, on the event loop: an order
 * book (about 10 KB) takes some 10 µs of CPU so, and about 40 µs more through the thread pool
 * (a zlib stream, its buffers and callbacks for every answer, and the answer then waits for the
 * pool). A larger one goes to Node's zlib on its thread pool, so a large body does not hold the
 * event loop. The output is bounded: a small body that inflates past MAX_DECODED_BYTES is refused,
 * not decoded.
 */
import {
  type BrotliOptions,
  brotliDecompress,
  brotliDecompressSync,
  gunzip,
  gunzipSync,
  inflate,
  inflateRaw,
  inflateRawSync,
  inflateSync,
  type ZlibOptions,
} from 'node:zlib';

/** 64 MiB: far above any upstream answer (a full order book is about 10 KB), far below harm. */
export const MAX_DECODED_BYTES = 64 * 1024 * 1024;
/** Decoded on the event loop up to this: a fraction of a millisecond, the most it is held. */
export const SYNC_MAX_DECODED_BYTES = 256 * 1024;

type Decoder = (input: Buffer, done: (error: Error | null, output: Buffer) => void) => void;
type SyncDecoder = (input: Buffer) => Buffer;

const zlibOptions: ZlibOptions = { maxOutputLength: MAX_DECODED_BYTES };
const brotliOptions: BrotliOptions = { maxOutputLength: MAX_DECODED_BYTES };
const syncZlibOptions: ZlibOptions = { maxOutputLength: SYNC_MAX_DECODED_BYTES };
const syncBrotliOptions: BrotliOptions = { maxOutputLength: SYNC_MAX_DECODED_BYTES };

const gzipDecoder: Decoder = (input, done) => gunzip(input, zlibOptions, done);
const gzipSyncDecoder: SyncDecoder = (input) => gunzipSync(input, syncZlibOptions);

/** Names are case-insensitive; `identity` is no coding at all. */
const decoders: Readonly<Record<string, { sync: SyncDecoder; pooled: Decoder }>> = {
  gzip: { sync: gzipSyncDecoder, pooled: gzipDecoder },
  'x-gzip': { sync: gzipSyncDecoder, pooled: gzipDecoder },
  br: {
    sync: (input) => brotliDecompressSync(input, syncBrotliOptions),
    pooled: (input, done) => brotliDecompress(input, brotliOptions, done),
  },
  // HTTP's `deflate` is the zlib format, but some servers send raw deflate: both are accepted.
  deflate: {
    sync: (input) => {
      try {
        return inflateSync(input, syncZlibOptions);
      } catch (error) {
        if (tooLarge(error)) throw error;
        return inflateRawSync(input, syncZlibOptions);
      }
    },
    pooled: (input, done) =>
      inflate(input, zlibOptions, (error, output) =>
        error === null ? done(null, output) : inflateRaw(input, zlibOptions, done),
      ),
  },
};

/** zlib's answer to an output past `maxOutputLength`. */
function tooLarge(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ERR_BUFFER_TOO_LARGE';
}

/**
 * Calls `done` with the decoded body, or with why it cannot be decoded (an unknown coding, a
 * corrupt or truncated stream, an output past the bound). Codings listed in order of application
 * are undone last first. A body small enough is decoded before this returns.
 */
export function decodeBody(
  body: Buffer,
  contentEncoding: string,
  done: (decoded: Buffer | string) => void,
): void {
  const codings = contentEncoding
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  const unknown = codings.find((coding) => decoders[coding] === undefined);
  if (unknown !== undefined) {
    done(`unsupported content-encoding ${JSON.stringify(unknown)}`);
    return;
  }
  const step = (input: Buffer, remaining: string[]): void => {
    const coding = remaining.pop();
    if (coding === undefined) {
      done(input);
      return;
    }
    const decoder = decoders[coding]!;
    const failed = (error: Error) => done(`${coding} body cannot be decoded: ${error.message}`);
    let output: Buffer | undefined;
    try {
      output = decoder.sync(input);
    } catch (error) {
      // Larger than the event loop's share: the thread pool decodes it, within the whole bound.
      if (!tooLarge(error)) {
        failed(error as Error);
        return;
      }
    }
    if (output !== undefined) {
      step(output, remaining);
      return;
    }
    decoder.pooled(input, (error, pooled) => {
      if (error === null) step(pooled, remaining);
      else failed(error);
    });
  };
  step(body, codings);
}
