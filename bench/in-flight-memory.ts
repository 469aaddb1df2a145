/**
 * In-flight memory: the heap a node holds per locked run while Redis has not answered yet, once for a
 * tick's claim and once for a run's release. A node with J jobs due in the same second holds J of them at
 * once, for as long as its whole burst takes; what lives that long is promoted out of V8's young
 * generation, which is most of what a locked node's RSS adds over an unlocked one (`npm run bench:scale`).
 *
 * One Nest app in this process, from the built package, runs J runtime cron jobs every second on a private
 * `redis-server`. Each round pauses Redis (`CLIENT PAUSE … ALL`) across a burst and compares the heap
 * after a full GC with the heap before the burst:
 * - **claim**: paused before the burst, so every tick's claim waits;
 * - **release**: paused by the burst's first handler, so every run that ran waits for its release;
 * - **unlocked**: the same app without the lock module, no pause: what cron itself holds across a burst.
 *
 * Run: `npm run bench:in-flight`. Env: BENCH_JOBS=1000 (at most 2,000: the burst must have run by the
 * measurement at half past the second), BENCH_ROUNDS=5. Prints a markdown table.
 */
import 'reflect-metadata';
import { Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { Redis } from 'ioredis';
import { LockedJobRegistry, SchedulerLockModule } from 'nest-scheduler-lock';
import { startPrivateRedisServer } from '../test/support/redis-server.js';
import { describeEnvironment, loadAverage, numberFromEnv } from './support/environment.js';
import { median } from './support/stats.js';
import { markdownTable } from './support/table.js';

const JOBS = numberFromEnv('BENCH_JOBS', 1_000);
const ROUNDS = numberFromEnv('BENCH_ROUNDS', 5);
const MAX_JOBS = 2_000;
const MAX_JOBS_WHY = 'a bigger burst has not run by half past the second on 2 cores, where each round measures it';
/** Long enough to cover the burst and the measurement at half past. */
const PAUSE_MS = 700;

type Phase = 'claim' | 'release' | 'unlocked';

function progress(message: string): void {
  process.stderr.write(`[in-flight ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** Heap used after a full collection: what is live, not when the GC last ran. */
function liveHeap(): number {
  if (!globalThis.gc) throw new Error('in-flight bench: run with --expose-gc');
  globalThis.gc();
  return process.memoryUsage().heapUsed;
}

/** Resolves at the next moment the wall clock reads `ms` past a whole second. */
function atMillisecond(ms: number): Promise<void> {
  const now = Date.now() % 1_000;
  return new Promise((resolve) => setTimeout(resolve, (ms - now + 1_000) % 1_000 || 1_000));
}

/** The app: J cron jobs every second, added at runtime as the README shows, locked unless `redisUrl` is not given. */
async function startApp(redisUrl: string | undefined, onRun: () => void) {
  const imports: DynamicModule[] = [ScheduleModule.forRoot()];
  const client = redisUrl === undefined ? undefined : new Redis(redisUrl);
  if (client) {
    const keyPrefix = `in-flight-${process.pid}`;
    imports.push(SchedulerLockModule.forRoot({ redis: client, keyPrefix, defaultLockAtMostFor: '10s' }));
  }
  @Module({ imports })
  class InFlightModule {}
  const app = await NestFactory.createApplicationContext(InFlightModule, { logger: false });
  const registry = app.get(SchedulerRegistry);
  const jobs = Array.from({ length: JOBS }, (_, i) => {
    if (client) app.get(LockedJobRegistry).declare(`tenant-${i}`);
    const job = CronJob.from({ cronTime: '* * * * * *', onTick: onRun, start: false });
    registry.addCronJob(`tenant-${i}`, job);
    return job;
  });
  for (const job of jobs) job.start();
  return {
    close: async () => {
      await app.close();
      client?.disconnect();
    },
  };
}

/** Bytes per job held across one burst, in `phase`'s way, over the rounds. */
async function measure(phase: Phase, redisUrl: string): Promise<number[]> {
  const admin = new Redis(redisUrl);
  let runs = 0;
  let pauseOnRun = false;
  const app = await startApp(phase === 'unlocked' ? undefined : redisUrl, () => {
    runs++;
    if (!pauseOnRun) return;
    pauseOnRun = false;
    void admin.call('CLIENT', 'PAUSE', String(PAUSE_MS), 'ALL');
  });
  await atMillisecond(0);
  await atMillisecond(0); // warmed up: a burst has run
  const perJob: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await atMillisecond(850);
    const before = liveHeap();
    const runsBefore = runs;
    if (phase === 'claim') await admin.call('CLIENT', 'PAUSE', String(PAUSE_MS), 'ALL');
    if (phase === 'release') pauseOnRun = true;
    await atMillisecond(350);
    const during = liveHeap();
    const ran = runs - runsBefore;
    const expected = phase === 'claim' ? 0 : JOBS;
    if (ran !== expected) throw new Error(`${phase}: ${ran} runs in the burst, expected ${expected}`);
    perJob.push((during - before) / JOBS);
    await atMillisecond(850); // the pause is over and the burst has settled
  }
  await app.close();
  admin.disconnect();
  return perJob;
}

async function main(): Promise<void> {
  if (JOBS > MAX_JOBS) throw new Error(`BENCH_JOBS is ${JOBS}; at most ${MAX_JOBS}: ${MAX_JOBS_WHY}`);
  const server = await startPrivateRedisServer();
  try {
    const probe = new Redis(server.url);
    const environment = await describeEnvironment(probe);
    probe.disconnect();
    const rows: string[][] = [];
    for (const phase of ['claim', 'release', 'unlocked'] as const) {
      progress(`${phase}: ${JOBS} jobs, ${ROUNDS} rounds`);
      const perJob = await measure(phase, server.url);
      const bytes = perJob.map((value) => Math.round(value).toLocaleString('en-US'));
      rows.push([phase, Math.round(median(perJob)).toLocaleString('en-US'), bytes.join(' ')]);
    }
    const what = ['held across a burst', 'bytes per job (median)', 'each round'];
    process.stdout.write(`# In-flight memory\n\n${environment} · ${loadAverage()} at the end\n\n`);
    process.stdout.write(
      `${JOBS} jobs every second, ${ROUNDS} rounds; heap after a full GC, during − before the burst\n\n`,
    );
    process.stdout.write(`${markdownTable(what, rows)}\n`);
  } finally {
    await server.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `in-flight bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
