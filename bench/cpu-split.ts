/**
 * Where a lock cycle's cost goes: this process's CPU and Redis's CPU per cycle (from `INFO commandstats`
 * of a private redis-server), at concurrency 64, for the raw floor, a bare fenced script (the least a
 * fenced acquire can cost through ioredis `defineCommand`), and ours. Complements `lock-cycle.ts`,
 * which gives the ratios; this tells which side a gap is on.
 *
 * Run: `npm run bench:cpu` (env CPU_SPLIT_SECONDS=2 per slice, CPU_SPLIT_ROUNDS=3).
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisLockProvider } from 'nest-scheduler-lock';
import { startPrivateRedisServer } from '../test/support/redis-server.js';
import { describeEnvironment, numberFromEnv } from './support/environment.js';
import { markdownTable } from './support/table.js';

const WORKERS = 64;
const SLICE_MS = numberFromEnv('CPU_SPLIT_SECONDS', 2) * 1_000;
const ROUNDS = numberFromEnv('CPU_SPLIT_ROUNDS', 3);
const TTL_MS = 30_000;
const COMPARE_AND_DELETE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
const FENCED_SET = "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) end return 0";

type FencedClient = Redis & { fencedSet(key: string, fenceKey: string, token: string, ttl: number): Promise<number> };

/** Redis CPU so far (µs), all commands but INFO. */
async function redisMicros(admin: Redis): Promise<number> {
  let micros = 0;
  for (const [, name, usec] of (await admin.info('commandstats')).matchAll(/cmdstat_([^:]+):calls=\d+,usec=(\d+)/g)) {
    if (name !== 'info') micros += Number(usec);
  }
  return micros;
}

const server = await startPrivateRedisServer();
const client = new Redis(server.port, '127.0.0.1') as FencedClient;
const admin = new Redis(server.port, '127.0.0.1');
try {
  const releaseSha = (await client.script('LOAD', COMPARE_AND_DELETE)) as string;
  client.defineCommand('fencedSet', { lua: FENCED_SET, numberOfKeys: 2 });
  const provider = new RedisLockProvider(client, { keyPrefix: 'ours', lockedBy: 'bench' });
  const configurations = Array.from({ length: WORKERS }, (_, worker) => ({ name: `lock-${worker}`, lockAtMostFor: TTL_MS, lockAtLeastFor: 0 }));
  const cycles: Record<string, (worker: number) => Promise<void>> = {
    'raw SET NX PX + EVALSHA': async (worker) => {
      const key = `raw:${worker}`;
      const token = randomUUID();
      await client.set(key, token, 'PX', TTL_MS, 'NX');
      await client.evalsha(releaseSha, 1, key, token);
    },
    'bare fenced script + EVALSHA': async (worker) => {
      const key = `fenced:${worker}`;
      const token = randomUUID();
      await client.fencedSet(key, `${key}:fence`, token, TTL_MS);
      await client.evalsha(releaseSha, 1, key, token);
    },
    'ours RedisLockProvider': async (worker) => {
      const lock = await provider.lock(configurations[worker]);
      await lock!.unlock();
    },
  };
  const rows: string[][] = [];
  console.log(`${await describeEnvironment(admin)}; c=${WORKERS}, ${ROUNDS} rounds of ${SLICE_MS} ms per contender, private redis-server`);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, cycle] of Object.entries(cycles)) {
      let done = 0;
      const until = performance.now() + SLICE_MS;
      const redisBefore = await redisMicros(admin);
      const cpuBefore = process.cpuUsage();
      await Promise.all(
        Array.from({ length: WORKERS }, async (_, worker) => {
          while (performance.now() < until) {
            await cycle(worker);
            done++;
          }
        }),
      );
      const cpu = process.cpuUsage(cpuBefore);
      const redis = (await redisMicros(admin)) - redisBefore;
      rows.push([String(round), name, ((done * 1_000) / SLICE_MS).toFixed(0), ((cpu.user + cpu.system) / done).toFixed(1), (redis / done).toFixed(1)]);
    }
  }
  console.log(markdownTable(['round', 'cycle', 'cycles/s', 'node CPU µs/cycle', 'Redis CPU µs/cycle'], rows));
} finally {
  client.disconnect();
  admin.disconnect();
  await server.kill();
}
