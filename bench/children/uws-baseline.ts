/**
 * @module bench/children/uws-baseline
 * The native anchor: uWebSockets.js (C++ HTTP and WebSocket server with its own pub/sub). Clients
 * pick their topics in the URL (`?topics=3,4`) as with the `ws` baseline and are subscribed to them
 * on open; each topic's message, paced like the other baselines, is stringified once and handed to
 * `app.publish`, which frames it once and writes it to every subscriber in C++. Compression off,
 * as everywhere in the fan-out scenarios. uWS runs on Node's own event loop, so this process's CPU
 * time is all of it.
 */
import { type BroadcastPlan, baselineMessage, Pacer, topicsOf } from '../lib/baselines/baseline-frame.ts';
import { loadUws, uwsBinary } from '../lib/baselines/uws.ts';
import { serveIpc } from '../lib/ipc.ts';
import { memoryAfterGc, sampleUsage } from '../lib/usage.ts';

const binary = uwsBinary();
if ('missing' in binary) throw new Error(binary.missing);
const uws = loadUws(binary.path);

interface Joined {
  topics: number[];
}

const topics = new Set<number>();
let welcomeBytes = 0;

const app = uws.App().ws<Joined>('/*', {
  compression: uws.DISABLED,
  maxPayloadLength: 64 * 1024,
  // `ws` queues without bound for a slow reader and never drops; uWS by default skips a
  // subscriber holding over 64 KB unsent, which would drop messages. Same as `ws`: drop nothing.
  maxBackpressure: 1024 ** 3,
  // No pings or idle timeout, as the `ws` baseline has none.
  idleTimeout: 0,
  sendPingsAutomatically: false,
  upgrade: (res, req, context) => {
    res.upgrade<Joined>(
      { topics: topicsOf(new URLSearchParams(req.getQuery()).get('topics')) },
      req.getHeader('sec-websocket-key'),
      req.getHeader('sec-websocket-protocol'),
      req.getHeader('sec-websocket-extensions'),
      context,
    );
  },
  open: (ws) => {
    for (const topic of ws.getUserData().topics) {
      topics.add(topic);
      ws.subscribe(String(topic));
      if (welcomeBytes > 0) ws.send(JSON.stringify(baselineMessage(welcomeBytes, topic, 0)));
    }
  },
});

const listening = await new Promise<object>((resolve, reject) => {
  app.listen('127.0.0.1', 0, (socket) =>
    socket === false ? reject(new Error('uWS could not listen')) : resolve(socket),
  );
});
const port = uws.us_socket_local_port(listening);

let pacer: Pacer | undefined;

function start(plan: BroadcastPlan): void {
  pacer = new Pacer(plan, topics, (topic, seq, rts) => {
    app.publish(
      String(topic),
      JSON.stringify(baselineMessage(plan.frameBytes, topic, seq, rts)),
      false,
      false,
    );
  });
}

serveIpc({
  ready: () => ({ url: `ws://127.0.0.1:${port}/` }),
  welcome: (payload) => {
    welcomeBytes = (payload as { bytes: number }).bytes;
  },
  start: (payload) => start(payload as BroadcastPlan),
  paced: () => pacer?.sample(),
  usage: () => sampleUsage(),
  memory: () => memoryAfterGc(),
});
process.on('SIGTERM', () => {
  pacer?.stop();
  uws.us_listen_socket_close(listening);
  process.exit(0);
});
