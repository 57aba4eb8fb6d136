/**
 * @module relay/coordination/redis/scripts
 * The relay's Lua scripts as commands of each Redis connection (ioredis `defineCommand`): a
 * connection sends a script's text once and runs it by its SHA1 after that (EVALSHA, and EVAL
 * again if Redis answers NOSCRIPT, after a restart or a SCRIPT FLUSH), instead of sending about a
 * kilobyte of Lua with every claim, commit and budget lease. Called as `redis.relayClaim(numKeys,
 * ...keys, ...args)`, the same arguments as EVAL without the script.
 */
import type { ClientContext, Redis, Result } from 'ioredis';
import { HOLD_RECORDING, RELEASE_RECORDING } from '../recording/lease-scripts.ts';
import { LEASE_TOKENS, REPORT_SPENDING } from './budget-scripts.ts';
import { ANNOUNCE, CLAIM, CLOSE, COMMIT, LOAD, RELEASE } from './stream-scripts.ts';

const scripts = {
  relayClaim: CLAIM,
  relayRelease: RELEASE,
  relayAnnounce: ANNOUNCE,
  relayCommit: COMMIT,
  relayClose: CLOSE,
  relayLoad: LOAD,
  relayLeaseTokens: LEASE_TOKENS,
  relayReportSpending: REPORT_SPENDING,
  relayHoldRecording: HOLD_RECORDING,
  relayReleaseRecording: RELEASE_RECORDING,
} as const;

type ScriptCall<Context extends ClientContext> = (
  numKeys: number,
  ...keysAndArgs: string[]
) => Result<unknown, Context>;

/** One command per script above, named as it is there. */
type ScriptCommands<Context extends ClientContext> = {
  [Name in keyof typeof scripts]: ScriptCall<Context>;
};

declare module 'ioredis' {
  interface RedisCommander<Context> extends ScriptCommands<Context> {}
}

/** Makes every script of the relay a command of `redis` (both a single Redis and a Cluster). */
export function defineScripts(redis: Pick<Redis, 'defineCommand'>): void {
  for (const [name, lua] of Object.entries(scripts)) redis.defineCommand(name, { lua });
}
