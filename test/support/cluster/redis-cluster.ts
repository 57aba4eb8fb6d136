/**
 * @module test/support/cluster/redis-cluster
 * A private Redis Cluster: `redis-server --cluster-enabled yes` nodes on free ports (client and bus
 * port both chosen free), joined by `redis-cli --cluster create`, nothing persisted, removed after.
 * Never the machine's shared Redis. No test runner here: the benchmarks start theirs with it too.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import type { RedisTopology } from '../../../src/relay/coordination/redis/connection.ts';
import { waitFor } from '../wait-for.ts';
import { findBinary, spawnRedisOnFreePorts } from './redis-server.ts';

const run = promisify(execFile);

export interface RedisClusterNode {
  port: number;
  url: string;
  /** Kills the node at once (SIGKILL): a crash, its replica takes over after the node timeout. */
  kill(): Promise<void>;
}

export interface RedisCluster {
  nodes: RedisClusterNode[];
  /** Every node's URL, comma-separated: what `--redis` takes. */
  spec: string;
  topology: RedisTopology;
  /** The node serving `key`'s slot as primary now. */
  primaryOf(key: string): Promise<RedisClusterNode>;
  /** Moves `key`'s slot, with its keys, to another primary (a resharding: clients meet ASK, then MOVED). */
  moveSlotOf(key: string): Promise<void>;
  /**
   * Waits until every live node reports `cluster_state:ok`, every slot's primary is alive and every
   * replica has synced with its primary (so it can take over).
   */
  waitHealthy(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export function findRedisCli(): string | undefined {
  return findBinary('redis-cli');
}

export interface RedisClusterOptions {
  primaries?: number;
  /** Replicas per primary. */
  replicas?: number;
  /** `cluster-node-timeout`: how soon a dead primary's replica takes over. */
  nodeTimeoutMs?: number;
}

export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const { primaries = 3, replicas = 0, nodeTimeoutMs = 1_000 } = options;
  const server = findBinary('redis-server');
  const cli = findRedisCli();
  if (server === undefined || cli === undefined) throw new Error('redis-server and redis-cli are needed');
  const dir = mkdtempSync(join(tmpdir(), 'market-relay-redis-cluster-'));
  const children: ChildProcess[] = [];
  const nodes: RedisClusterNode[] = [];
  const stopAll = async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < primaries * (1 + replicas); i += 1) {
      const started = await spawnRedisOnFreePorts(server, 2, ([port, busPort]) => {
        const nodeDir = join(dir, `${port}-${busPort}`);
        mkdirSync(nodeDir);
        return [
          ...['--port', String(port), '--cluster-port', String(busPort), '--bind', '127.0.0.1'],
          ...['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--dir', nodeDir],
          ...['--cluster-node-timeout', String(nodeTimeoutMs), '--save', '', '--appendonly', 'no'],
          // A replica's first sync at once, not after the default 5 s wait for more replicas.
          ...['--repl-diskless-sync-delay', '0'],
        ];
      });
      const { child } = started;
      const port = started.ports[0]!;
      children.push(child);
      nodes.push({
        port,
        url: `redis://127.0.0.1:${port}`,
        async kill() {
          if (child.exitCode !== null || child.signalCode !== null) return;
          const exited = once(child, 'exit');
          child.kill('SIGKILL');
          await exited;
        },
      });
    }
    await run(cli, [
      '--cluster',
      'create',
      ...nodes.map((node) => `127.0.0.1:${node.port}`),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ]);
  } catch (error) {
    await stopAll();
    throw error;
  }
  const alive = () =>
    nodes.filter((_, i) => children[i]!.exitCode === null && children[i]!.signalCode === null);
  const cluster: RedisCluster = {
    nodes,
    spec: nodes.map((node) => node.url).join(','),
    topology: {
      kind: 'cluster',
      nodes: nodes.map((node) => ({ host: '127.0.0.1', port: node.port })),
      url: nodes[0]!.url,
    },
    async primaryOf(key) {
      const slot = Number(await ask(alive()[0]!.port, (redis) => redis.call('CLUSTER', 'KEYSLOT', key)));
      const owner = (await slotRanges(alive()[0]!.port)).find(({ from, to }) => slot >= from && slot <= to);
      const node = nodes.find((candidate) => candidate.port === owner?.port);
      if (node === undefined) throw new Error(`no primary serves ${key}`);
      return node;
    },
    async moveSlotOf(key) {
      const source = await cluster.primaryOf(key);
      const primaries = new Set((await slotRanges(source.port)).map(({ port }) => port));
      const destination = nodes.find((node) => node.port !== source.port && primaries.has(node.port))!;
      const slot = String(await ask(source.port, (redis) => redis.call('CLUSTER', 'KEYSLOT', key)));
      const idOf = (node: RedisClusterNode) => ask(node.port, (redis) => redis.call('CLUSTER', 'MYID'));
      const [sourceId, destinationId] = [String(await idOf(source)), String(await idOf(destination))];
      await ask(destination.port, (redis) => redis.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', sourceId));
      await ask(source.port, (redis) => redis.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', destinationId));
      await ask(source.port, async (redis) => {
        for (;;) {
          const keys = (await redis.call('CLUSTER', 'GETKEYSINSLOT', slot, '100')) as string[];
          if (keys.length === 0) return;
          await redis.call(
            'MIGRATE',
            '127.0.0.1',
            String(destination.port),
            '',
            '0',
            '5000',
            'KEYS',
            ...keys,
          );
        }
      });
      for (const node of [destination, source, ...alive()])
        await ask(node.port, (redis) => redis.call('CLUSTER', 'SETSLOT', slot, 'NODE', destinationId)).catch(
          () => undefined, // a replica refuses SETSLOT; it learns the move from its primary
        );
    },
    async waitHealthy(timeoutMs = 8_000) {
      const live = new Set(alive().map((node) => node.port));
      await waitFor(
        'every redis cluster node to report cluster_state:ok, every slot served by a live primary',
        async () => {
          for (const port of live) {
            const info = String(await ask(port, (redis) => redis.call('CLUSTER', 'INFO')));
            if (!info.includes('cluster_state:ok')) return false;
            if (!(await slotRanges(port)).every((range) => live.has(range.port))) return false;
            // A replica that never synced refuses to take over: its data would be too old.
            const replication = String(await ask(port, (redis) => redis.call('INFO', 'replication')));
            if (replication.includes('role:slave') && !replication.includes('master_link_status:up'))
              return false;
          }
          return true;
        },
        { timeoutMs, everyMs: 50 },
      );
    },
    stop: stopAll,
  };
  try {
    await cluster.waitHealthy();
  } catch (error) {
    await stopAll();
    throw error;
  }
  return cluster;
}

async function slotRanges(port: number): Promise<{ from: number; to: number; port: number }[]> {
  const shards = (await ask(port, (redis) => redis.call('CLUSTER', 'SLOTS'))) as [
    number,
    number,
    [string, number],
  ][];
  return shards.map(([from, to, primary]) => ({ from, to, port: primary[1] }));
}

async function ask<T>(port: number, question: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return await question(redis);
  } finally {
    redis.disconnect();
  }
}
