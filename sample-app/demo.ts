import { setTimeout as sleep } from 'node:timers/promises';
import { withoutCredentials } from '../lib/core/provider/message-text.js';
import { DEFAULT_REDIS_URL, NoRedisForRunError, redisForRun } from '../test/support/redis-for-run.js';
import { startEmbeddedPostgres } from './demo/embedded-postgres.js';
import { deleteKeysUnder } from './demo/redis.js';
import { startInstance } from './demo/instance-process.js';
import { countDuplicates, renderTickTable, summarizeInstances } from './demo/tick-table.js';
import type { TickLine } from './jobs/tick-line.js';

/**
 * The cluster demo (`npm run demo`): three instances of the sample app on one store for DEMO_SECONDS
 * (default 30), then a table of which instance ran which job in each second. Exits 1 if any job ran
 * twice in the same second. The store is Redis (see {@link redisForRun}); where there is none and no
 * redis-server to start, or with DEMO_STORE=embedded, an embedded PostgreSQL the instances share.
 */

const INSTANCE_COUNT = 3;

/** The store the demo's instances share. */
interface DemoStore {
  /** What the demo prints about it, password-free. */
  readonly shown: string;
  /** The environment that points an instance at it. */
  readonly env: NodeJS.ProcessEnv;
  /** Removes what the demo left in it and stops what the demo started. */
  close(): Promise<void>;
}

async function main(): Promise<number> {
  const seconds = Number(process.env.DEMO_SECONDS ?? 30);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new Error(`DEMO_SECONDS must be a positive number of seconds, got "${process.env.DEMO_SECONDS}"`);
  const store = await demoStore();
  try {
    return await runDemo(store, seconds);
  } finally {
    await store.close();
  }
}

/** REDIS_URL, else 6379, else a private redis-server (the rule of npm test), else the embedded PostgreSQL. */
async function demoStore(): Promise<DemoStore> {
  const asked = process.env.DEMO_STORE;
  if (asked !== undefined && asked !== 'embedded' && asked !== 'redis')
    throw new Error(`DEMO_STORE must be "redis" or "embedded", got "${asked}"`);
  if (asked === 'embedded') return embeddedStore('DEMO_STORE=embedded');
  try {
    const redis = await redisForRun();
    if (redis.privatePid !== undefined)
      console.log(
        `No Redis at ${DEFAULT_REDIS_URL}: started a private redis-server at ${redis.url} (pid ${redis.privatePid})`,
      );
    // A prefix of its own, so locks left over by an earlier, interrupted demo cannot skew this one.
    const keyPrefix = `sample-app-demo-${process.pid}-${Date.now()}`;
    return {
      shown: `Redis ${withoutCredentials(redis.url)}, key prefix "${keyPrefix}"`,
      env: { REDIS_URL: redis.url, KEY_PREFIX: keyPrefix, DATABASE_URL: undefined },
      async close() {
        await deleteKeysUnder(redis.url, keyPrefix);
        await redis.stop();
      },
    };
  } catch (error) {
    // A REDIS_URL that fails was asked for by name: that stops the demo. So does DEMO_STORE=redis.
    if (!(error instanceof NoRedisForRunError) || process.env.REDIS_URL || asked === 'redis') throw error;
    return embeddedStore(`No Redis at ${DEFAULT_REDIS_URL} and no redis-server to start one`);
  }
}

async function embeddedStore(why: string): Promise<DemoStore> {
  console.log(
    `${why}: the demo runs on an embedded PostgreSQL instead (PGlite, PostgreSQL in WASM, in this process, ` +
      'through nest-scheduler-lock/postgres). Starting it, which takes a few seconds...',
  );
  const postgres = await startEmbeddedPostgres();
  return {
    shown: `embedded PostgreSQL ${postgres.url}`,
    env: { DATABASE_URL: postgres.url },
    close: () => postgres.stop(),
  };
}

async function runDemo(store: DemoStore, seconds: number): Promise<number> {
  console.log(`Running ${INSTANCE_COUNT} instances of the sample app for ${seconds} s (${store.shown})\n`);

  const ticks: TickLine[] = [];
  const instances = Array.from({ length: INSTANCE_COUNT }, (_, i) =>
    startInstance(`instance-${i + 1}`, store.env, (tick) => {
      ticks.push(tick);
      console.log(`  ${tick.tick.slice(11, 19)}  ${tick.job.padEnd(16)} ran on ${tick.instance}`);
    }),
  );
  try {
    await Promise.all(instances.map((instance) => instance.ready));
    await sleep(seconds * 1_000);
  } finally {
    await Promise.all(instances.map((instance) => instance.stop()));
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
