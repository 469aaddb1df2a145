/**
 * Where a lock cycle's cost goes: this process's CPU and Redis's CPU per cycle (from `INFO commandstats`
 * of a private redis-server), at concurrency 64, for the raw floor, the fenced floor (the smallest
 * fenced acquire script, by bare `evalsha`) and ours, the same contenders as `lock-cycle.ts`, which
 * gives the ratios; this tells which side a gap is on.
 *
 * Run: `npm run bench:cpu` (env CPU_SPLIT_SECONDS=2 per slice, CPU_SPLIT_ROUNDS=3).
 */
import { Redis } from 'ioredis';
import { startPrivateRedisServer } from '../test/support/redis-server.js';
import type { Contender } from './contenders/contender.js';
import { fencedFloorContender } from './contenders/fenced-floor.js';
import { oursContender } from './contenders/ours.js';
import { rawContender } from './contenders/raw.js';
import { describeEnvironment, numberFromEnv } from './support/environment.js';
import { markdownTable } from './support/table.js';

const WORKERS = 64;
const SLICE_MS = numberFromEnv('CPU_SPLIT_SECONDS', 2) * 1_000;
const ROUNDS = numberFromEnv('CPU_SPLIT_ROUNDS', 3);
const TTL_MS = 30_000;

/** Redis CPU so far (µs), all commands but INFO. */
async function redisMicros(admin: Redis): Promise<number> {
  let micros = 0;
  for (const [, name, usec] of (await admin.info('commandstats')).matchAll(/cmdstat_([^:]+):calls=\d+,usec=(\d+)/g)) {
    if (name !== 'info') micros += Number(usec);
  }
  return micros;
}

const server = await startPrivateRedisServer();
const client = new Redis(server.port, '127.0.0.1');
const admin = new Redis(server.port, '127.0.0.1');
try {
  const settings = (keyPrefix: string) => ({ keyPrefix, ttlMs: TTL_MS });
  const contenders: Contender[] = [
    await rawContender(client, settings('raw')),
    await fencedFloorContender(client, settings('fenced')),
    oursContender(client, settings('ours'), WORKERS),
  ];
  const rows: string[][] = [];
  console.log(`${await describeEnvironment(admin)}; c=${WORKERS}, ${ROUNDS} rounds of ${SLICE_MS} ms per contender, private redis-server`);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const { label, cycle } of contenders) {
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
      rows.push([String(round), label, ((done * 1_000) / SLICE_MS).toFixed(0), ((cpu.user + cpu.system) / done).toFixed(1), (redis / done).toFixed(1)]);
    }
  }
  console.log(markdownTable(['round', 'cycle', 'cycles/s', 'node CPU µs/cycle', 'Redis CPU µs/cycle'], rows));
} finally {
  client.disconnect();
  admin.disconnect();
  await server.kill();
}
