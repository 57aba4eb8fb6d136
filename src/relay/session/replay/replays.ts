/**
 * @module relay/session/replay/replays
 * The replays of the relay (`ReplayService`, one per relay: the record, the limits, the count per
 * client address) and of one session (`SessionReplays`): a `replay` checked (./replay-plan.ts), held
 * to the limits (docs/protocol.md "Replay": 2 at once per connection, 8 per client address), run
 * (./replay-run.ts) beside the session's live streams and ended with `replayed`; `replay_stop`
 * ends one early; the session closing ends them all. A replay touches none of the session's streams,
 * so its messages never move what `list` and resume see.
 */
import type { ReplayRequest, ReplayStopRequest } from '../../../../packages/protocol/src/protocol/history.ts';
import type { ErrorCode, RequestId } from '../../../../packages/protocol/src/protocol/messages.ts';
import type { RecordReader } from '../../../history/recorder.ts';
import { toFrame } from '../../streams/frame.ts';
import { planReplay } from './replay-plan.ts';
import { type ReplayOutput, type ReplayPacing, ReplayRun } from './replay-run.ts';

export interface ReplayLimits {
  /** Replays one connection may run at once. */
  perConnection: number;
  /** Replays the connections of one client address may run at once. */
  perAddress: number;
}

export const defaultReplayLimits: ReplayLimits = { perConnection: 2, perAddress: 8 };

/**
 * Why a replay was refused (the metrics' `reason`): one of the two limits, an id already running,
 * a request that is not a replay the relay can run (`bad_request`, `unknown_channel`), or a range
 * the record does not keep (`out_of_retention`, also with `--history off`).
 */
export const replayRefusalReasons = [
  'connection_limit',
  'address_limit',
  'duplicate_id',
  'invalid',
  'out_of_retention',
] as const;
export type ReplayRefusalReason = (typeof replayRefusalReasons)[number];

/** What the operators' metrics read of the relay's replays (docs/operations.md "Metrics"). */
export interface ReplayCounts {
  /** Replays running on every connection. */
  readonly running: number;
  /** Replays started since the relay started. */
  readonly started: number;
  /** Stream messages every replay has sent since start, those of running replays included. */
  readonly messagesSent: number;
  /** `replay_gap` messages every replay has sent since start, those of running replays included. */
  readonly gapsSent: number;
  /** Replays refused since start, by reason. */
  readonly refused: Readonly<Record<ReplayRefusalReason, number>>;
}

/** Replays stop filling a connection's send buffer at this many bytes, or a quarter of its high-water mark if less. */
const REPLAY_BUFFER_CEILING_BYTES = 256 * 1024;

export interface ReplayServiceOptions {
  /** The record; undefined when the relay records nothing (every replay is refused). */
  recorder: RecordReader | undefined;
  /** The connections' high-water mark, above which their live messages would be held back. */
  highWaterBytes: number;
  limits?: ReplayLimits;
  pacing?: Partial<ReplayPacing>;
  now?: () => number;
}

/** How the session answers a request with an error (counted with its other errors). */
export interface ReplayAnswers {
  error(id: RequestId, code: ErrorCode, message: string, channel?: string): void;
}

/** The replays of one session from client address `address`; `service` undefined: the relay has no record. */
export function sessionReplays(
  service: ReplayService | undefined,
  address: string | undefined,
  output: ReplayOutput,
  answers: ReplayAnswers,
): SessionReplays {
  return new SessionReplays(service, address ?? '', output, answers);
}

export class ReplayService implements ReplayCounts {
  readonly limits: ReplayLimits;
  readonly #recorder: RecordReader | undefined;
  readonly #pacing: ReplayPacing;
  readonly #now: () => number;
  readonly #byAddress = new Map<string, number>();
  /** Every running replay and the promise of its end. */
  readonly #runs = new Map<ReplayRun, Promise<void>>();
  running = 0;
  started = 0;
  readonly refused: Record<ReplayRefusalReason, number> = {
    connection_limit: 0,
    address_limit: 0,
    duplicate_id: 0,
    invalid: 0,
    out_of_retention: 0,
  };
  /** What the replays that ended sent; the running ones' own counts are added when read. */
  #endedMessages = 0;
  #endedGaps = 0;

  constructor(options: ReplayServiceOptions) {
    this.#recorder = options.recorder;
    this.limits = options.limits ?? defaultReplayLimits;
    this.#now = options.now ?? Date.now;
    this.#pacing = {
      bufferCeilingBytes: Math.min(REPLAY_BUFFER_CEILING_BYTES, Math.floor(options.highWaterBytes / 4)),
      batch: 256,
      drainCheckMs: 20,
      ...options.pacing,
    };
  }

  /** @internal what a session's replays ask of the relay's. */
  plan(request: ReplayRequest): ReturnType<typeof planReplay> {
    return planReplay(request, this.#now(), this.#recorder?.retention.maxAgeMs);
  }

  /** @internal */
  addressFull(address: string): boolean {
    return (this.#byAddress.get(address) ?? 0) >= this.limits.perAddress;
  }

  /** @internal one more replay of `address` (`+1`) or one fewer (`-1`). */
  count(address: string, change: 1 | -1): void {
    const held = (this.#byAddress.get(address) ?? 0) + change;
    if (held > 0) this.#byAddress.set(address, held);
    else this.#byAddress.delete(address);
    this.running += change;
  }

  get messagesSent(): number {
    let sent = this.#endedMessages;
    for (const run of this.#runs.keys()) sent += run.messages;
    return sent;
  }

  get gapsSent(): number {
    let sent = this.#endedGaps;
    for (const run of this.#runs.keys()) sent += run.gaps;
    return sent;
  }

  /** @internal */
  refuse(reason: ReplayRefusalReason): void {
    this.refused[reason] += 1;
  }

  /** @internal `run` runs until `ended` settles; what it sent stays counted. */
  track(run: ReplayRun, ended: Promise<void>): void {
    this.started += 1;
    this.#runs.set(run, ended);
    void ended.finally(() => {
      this.#endedMessages += run.messages;
      this.#endedGaps += run.gaps;
      this.#runs.delete(run);
    });
  }

  /** Stops every replay and waits until each has released its read: before the store is closed. */
  async stopAll(): Promise<void> {
    for (const run of this.#runs.keys()) run.stop();
    await Promise.all(this.#runs.values());
  }

  /** @internal */
  get recorder(): RecordReader | undefined {
    return this.#recorder;
  }

  /** @internal */
  get pacing(): ReplayPacing {
    return this.#pacing;
  }
}

export class SessionReplays {
  readonly #service: ReplayService | undefined;
  readonly #address: string;
  readonly #output: ReplayOutput;
  readonly #answers: ReplayAnswers;
  /** Running replays by their id's JSON (the id 1 and the id "1" are two). */
  readonly #runs = new Map<string, ReplayRun>();
  /** The same, read-only: with none, the session need not tell of its drains. */
  readonly running: ReadonlyMap<string, ReplayRun> = this.#runs;

  constructor(
    service: ReplayService | undefined,
    address: string,
    output: ReplayOutput,
    answers: ReplayAnswers,
  ) {
    this.#service = service;
    this.#address = address;
    this.#output = output;
    this.#answers = answers;
  }

  handle(request: ReplayRequest | ReplayStopRequest): void {
    if (request.op === 'replay_stop') this.#stop(request);
    else if (this.#service === undefined)
      this.#answers.error(
        request.id,
        'out_of_retention',
        'this relay records no history (--history off)',
        request.channel,
      );
    else this.#start(this.#service, request);
  }

  #start(service: ReplayService, request: ReplayRequest): void {
    const { id, channel } = request;
    const key = JSON.stringify(id);
    if (this.#runs.has(key)) {
      service.refuse('duplicate_id');
      this.#answers.error(
        id,
        'bad_request',
        `a replay with id ${key} is running: give each replay its own id`,
        channel,
      );
      return;
    }
    const planned = service.plan(request);
    if (!planned.ok) {
      service.refuse(planned.code === 'out_of_retention' ? 'out_of_retention' : 'invalid');
      this.#answers.error(id, planned.code, planned.message, channel);
      return;
    }
    const { perConnection, perAddress } = service.limits;
    if (this.#runs.size >= perConnection || service.addressFull(this.#address)) {
      const connectionFull = this.#runs.size >= perConnection;
      service.refuse(connectionFull ? 'connection_limit' : 'address_limit');
      const over = connectionFull ? `${perConnection} per connection` : `${perAddress} per client address`;
      this.#answers.error(
        id,
        'limit_exceeded',
        `too many replays at once (at most ${over}): wait for one to end or stop one`,
        channel,
      );
      return;
    }
    const recorder = service.recorder;
    if (recorder === undefined) return;
    const run = new ReplayRun(planned.plan, recorder.store, this.#output, service.pacing);
    this.#runs.set(key, run);
    if (this.#runs.size === 1) this.#output.wantDrains?.(true);
    service.count(this.#address, 1);
    service.track(run, this.#run(service, key, run, recorder));
  }

  #stop(request: ReplayStopRequest): void {
    const run = this.#runs.get(JSON.stringify(request.id));
    if (run === undefined) {
      this.#answers.error(
        request.id,
        'bad_request',
        `no replay with id ${JSON.stringify(request.id)} is running`,
      );
      return;
    }
    run.stop();
  }

  drained(): void {
    for (const run of this.#runs.values()) run.drained();
  }

  /** The session is gone: every replay stops and releases its reads. */
  close(): void {
    for (const run of this.#runs.values()) run.stop();
  }

  async #run(service: ReplayService, key: string, run: ReplayRun, recorder: RecordReader): Promise<void> {
    try {
      // What is still waiting for the flush window belongs to the record the replay reads.
      await recorder.flush().catch(() => undefined);
      const end = await run.run();
      if (this.#output.backlog === undefined) return;
      this.#output.write(
        toFrame({
          type: 'replayed',
          id: run.id,
          messages: run.messages,
          ...(end === 'stopped' ? { stopped: true as const } : {}),
        }),
      );
    } catch {
      if (this.#output.backlog !== undefined)
        this.#answers.error(run.id, 'internal', 'the record could not be read: the replay ended');
    } finally {
      this.#runs.delete(key);
      if (this.#runs.size === 0) this.#output.wantDrains?.(false);
      service.count(this.#address, -1);
    }
  }
}
