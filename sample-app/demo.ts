import { setTimeout as sleep } from 'node:timers/promises';
import { withoutCredentials } from '../lib/core/provider/message-text.js';
import { DEFAULT_REDIS_URL, NoRedisForRunError, redisForRun, type RunRedis } from '../test/support/redis-for-run.js';
import { deleteKeysUnder } from './demo/redis.js';
import { startInstance } from './demo/instance-process.js';
import { countDuplicates, renderTickTable, summarizeInstances } from './demo/tick-table.js';
import type { TickLine } from './jobs/tick-line.js';

/**
 * The cluster demo (`npm run demo`): three instances of the sample app on one Redis for DEMO_SECONDS
 * (default 30), then a table of which instance ran which job in each second. Exits 1 if any job ran
 * twice in the same second.
 */

const INSTANCE_COUNT = 3;

async function main(): Promise<number> {
  const seconds = Number(process.env.DEMO_SECONDS ?? 30);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new Error(`DEMO_SECONDS must be a positive number of seconds, got "${process.env.DEMO_SECONDS}"`);
  // REDIS_URL, else 6379, else a private redis-server for this demo only (the same rule as npm test).
  const redis = await redisForRun();
  try {
    if (redis.privatePid !== undefined)
      console.log(
        `No Redis at ${DEFAULT_REDIS_URL}: started a private redis-server at ${redis.url} (pid ${redis.privatePid})`,
      );
    return await runDemo(redis, seconds);
  } finally {
    await redis.stop();
  }
}

async function runDemo({ url: redisUrl }: RunRedis, seconds: number): Promise<number> {
  // A prefix of its own, so locks left over by an earlier, interrupted demo cannot skew this one.
  const keyPrefix = `sample-app-demo-${process.pid}-${Date.now()}`;
  console.log(
    `Running ${INSTANCE_COUNT} instances of the sample app for ${seconds} s ` +
      `(Redis ${withoutCredentials(redisUrl)}, key prefix "${keyPrefix}")\n`,
  );

  const ticks: TickLine[] = [];
  const instances = Array.from({ length: INSTANCE_COUNT }, (_, i) =>
    startInstance(`instance-${i + 1}`, { REDIS_URL: redisUrl, KEY_PREFIX: keyPrefix }, (tick) => {
      ticks.push(tick);
      console.log(`  ${tick.tick.slice(11, 19)}  ${tick.job.padEnd(16)} ran on ${tick.instance}`);
    }),
  );
  try {
    await Promise.all(instances.map((instance) => instance.ready));
    await sleep(seconds * 1_000);
  } finally {
    await Promise.all(instances.map((instance) => instance.stop()));
    await deleteKeysUnder(redisUrl, keyPrefix);
  }

  const duplicates = countDuplicates(ticks);
  console.log(`\n${renderTickTable(ticks)}\n`);
  console.log(`runs: ${ticks.length} (${summarizeInstances(ticks)})`);
  console.log(`duplicates: ${duplicates}`);
  return duplicates > 0 ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof NoRedisForRunError ? error.message : error);
    process.exitCode = 1;
  },
);
