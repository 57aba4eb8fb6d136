/**
 * @module upstream/content-encoding
 * Decodes a response body by its `Content-Encoding` (RFC 9110 section 8.4): the codings the relay
 * asks for (`gzip, br`) and those a server or CDN may send unasked (`deflate`, `x-gzip`), with
 * Node's zlib on its thread pool, so a large body does not hold the event loop. The output is
 * bounded: a small body that inflates past MAX_DECODED_BYTES is refused, not decoded.
 */
import {
  type BrotliOptions,
  brotliDecompress,
  gunzip,
  inflate,
  inflateRaw,
  type ZlibOptions,
} from 'node:zlib';

/** 64 MiB: far above any upstream answer (a full order book is about 10 KB), far below harm. */
export const MAX_DECODED_BYTES = 64 * 1024 * 1024;

type Decoder = (input: Buffer, done: (error: Error | null, output: Buffer) => void) => void;

const zlibOptions: ZlibOptions = { maxOutputLength: MAX_DECODED_BYTES };
const brotliOptions: BrotliOptions = { maxOutputLength: MAX_DECODED_BYTES };

const gzipDecoder: Decoder = (input, done) => gunzip(input, zlibOptions, done);

/** Names are case-insensitive; `identity` is no coding at all. */
const decoders: Readonly<Record<string, Decoder>> = {
  gzip: gzipDecoder,
  'x-gzip': gzipDecoder,
  br: (input, done) => brotliDecompress(input, brotliOptions, done),
  // HTTP's `deflate` is the zlib format, but some servers send raw deflate: both are accepted.
  deflate: (input, done) =>
    inflate(input, zlibOptions, (error, output) =>
      error === null ? done(null, output) : inflateRaw(input, zlibOptions, done),
    ),
};

/**
 * Calls `done` with the decoded body, or with why it cannot be decoded (an unknown coding, a
 * corrupt or truncated stream, an output past the bound). Codings listed in order of application
 * are undone last first.
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
    decoders[coding]!(input, (error, output) => {
      if (error === null) step(output, remaining);
      else done(`${coding} body cannot be decoded: ${error.message}`);
    });
  };
  step(body, codings);
}
