/**
 * @module bench/trace-cost
 * `node --import tsx bench/trace-cost.ts [--ratio 0.01] [--polls 200000]`: the CPU the tracing of
 * book polls adds to each poll, the path alone (docs/operations.md "Traces"): every poll's root span
 * (the sampler's decision), and for the sampled ones the spans a book update makes (request with its
 * `traceparent`, decode, parse, numbering, publish, fan-out), batched and exported as the relay
 * does to an OTLP/HTTP receiver that drops them (in this process, its small share of CPU counted).
 * Against the same loop with tracing off; the difference per poll is what tracing costs a poll, to
 * set against the relay's CPU per book poll (bench section 11). On a loaded machine the CPU time of
 * the loop still counts only this process's work.
 */
import { parseArgs } from 'node:util';
import pino from 'pino';
import { startTracing } from '../src/observability/tracing.ts';
import { TraceSpan, type Tracing } from '../src/util/tracing.ts';
import { median } from './lib/latency.ts';
import { startOtlpSink } from './lib/otlp-sink.ts';
import { fixed } from './lib/report.ts';

const { values } = parseArgs({
  options: { ratio: { type: 'string', default: '0.01' }, polls: { type: 'string', default: '200000' } },
});
const ratio = Number(values.ratio);
const polls = Number(values.polls);
/** Polls between two turns of the event loop, when batches are exported and fan-outs end. */
const TURN = 500;
const HEADERS = { accept: 'application/json', 'accept-encoding': 'gzip, br' };

/** What one book poll does with its trace, as src/ does it (the spans and their attributes). */
function poll(tracing: Tracing | undefined, index: number): number {
  const trace = tracing === undefined ? undefined : TraceSpan.root(tracing, 'book poll');
  if (trace === undefined) return 0;
  trace.set({ 'market_relay.market': `market-${index % 300}` });
  const request = trace.child(
    'GET /clob/orderbook',
    { 'http.request.method': 'GET', 'url.path': '/clob/orderbook', 'http.request.resend_count': 0 },
    'client',
  );
  const headers = request.withContext(HEADERS);
  const decode = request.child('decode', { 'http.response.header.content-encoding': ['br'] });
  decode.end();
  request.set({ 'http.response.status_code': 200, 'http.response.body.size': 2_100 });
  request.end();
  const parse = trace.child('parse');
  parse.set({ 'market_relay.outcome': 'ok' });
  parse.end();
  const numbering = trace.child('numbering', { 'market_relay.streams': 1 });
  const publish = numbering.child('publish', { 'market_relay.stream': `book:market-${index % 300}:10` });
  publish.set({ 'market_relay.message': 'update', 'market_relay.seq': index });
  publish
    .child('fan-out', {
      'market_relay.stream': `book:market-${index % 300}:10`,
      'market_relay.seq': index,
      'market_relay.subscribers': 1,
      'market_relay.message_bytes': 300,
      'market_relay.bytes': 300,
    })
    .endAfterTurn();
  publish.end();
  numbering.set({ 'market_relay.changed': true });
  numbering.end();
  trace.set({ 'market_relay.outcome': 'ok', 'market_relay.changed': true });
  trace.end();
  return headers.traceparent === undefined ? 0 : 1;
}

/** CPU µs per poll of `polls` polls, yielding to the event loop every TURN polls. */
async function cpuPerPoll(tracing: Tracing | undefined, flush: () => Promise<void>): Promise<number> {
  let sampled = 0;
  const start = process.cpuUsage();
  for (let done = 0; done < polls; done += TURN) {
    for (let index = done; index < done + TURN; index++) sampled += poll(tracing, index);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await flush();
  const used = process.cpuUsage(start);
  if (tracing !== undefined) console.log(`  sampled ${sampled} of ${polls} polls`);
  return (used.user + used.system) / polls;
}

const sink = await startOtlpSink();
const off: number[] = [];
const on: number[] = [];
// Alternated, three times each: what the machine's load does to one does it to the other.
for (let round = 0; round < 3; round++) {
  off.push(await cpuPerPoll(undefined, async () => {}));
  // A tracer of its own each round, shut down (its last batch sent) inside the measurement.
  const handle = startTracing({ endpoint: sink.url, sampleRatio: ratio, logger: pino({ level: 'silent' }) });
  on.push(await cpuPerPoll(handle.tracing, () => handle.shutdown()));
}
await sink.close();
console.log(
  `tracing off: ${fixed(median(off), 3)} µs/poll; at ratio ${ratio}: ${fixed(median(on), 3)} µs/poll; ` +
    `tracing adds ${fixed(median(on) - median(off), 3)} µs per poll (${sink.batches()} batches received)`,
);
