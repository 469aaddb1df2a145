import 'reflect-metadata';
import { format } from 'node:util';
import { Module, type DynamicModule, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { Redis } from 'ioredis';
import {
  currentLock,
  LockedJobRegistry,
  LockEvents,
  SchedulerLockModule,
  type SchedulerLockModuleOptions,
} from 'nest-scheduler-lock';
import { countingPool } from '../postgres/statement-counter.js';
import { countCommands } from '../support/command-counter.js';
import type { MemorySample, NodeMessage, ScaleNodeEnv, SecondSample } from './node-messages.js';
import { TickRecorder } from './tick-recorder.js';

/**
 * One node of the scale bench: a Nest application context with `@nestjs/schedule` that adds J cron jobs
 * at runtime, every second each, the same names on every node (an app with many tenants). `locked`: the
 * BUILT package (`nest-scheduler-lock` resolves to dist/) locks each job, on a Redis client the node
 * creates and counts the commands of (or, `BENCH_STORE=postgres`, a `pg` pool of 3 whose statements it
 * counts, with `PostgresLockProvider`); `leader`: the same, each job on the leader of one election only;
 * `unlocked`: the same app without the lock module, the baseline.
 * Started by scale-fleet.ts with `--expose-gc`; it reports on stdout (node-messages.ts) and never exits
 * by itself.
 */

/** Every second, unless the bench names other seconds (`BENCH_CRON`). */
const EVERY_SECOND = '* * * * * *';
/** The election the jobs of a `leader` node run on. */
const LEADER_ELECTION = 'scale';
/** cron 4's warning when it sets a timer already due, and runs the tick at once instead. */
const LATE_TICK = /^\[Cron\] Missed execution deadline by \d+ms .*Executing immediately\.$/s;

function readEnv(): ScaleNodeEnv {
  const env = process.env as Partial<ScaleNodeEnv>;
  const names = [
    'BENCH_NODE',
    'BENCH_MODE',
    'BENCH_JOBS',
    'BENCH_STORE',
    'BENCH_STORE_URL',
    'BENCH_KEY_PREFIX',
  ] as const;
  const missing = names.filter((name) => !env[name]);
  if (missing.length) throw new Error(`scale node: missing environment variable(s) ${missing.join(', ')}`);
  if (env.BENCH_MODE !== 'locked' && env.BENCH_MODE !== 'leader' && env.BENCH_MODE !== 'unlocked')
    throw new Error(`scale node: BENCH_MODE is "${env.BENCH_MODE}"`);
  return env as ScaleNodeEnv;
}

function send(message: NodeMessage): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/** Memory after a full collection, so two samples compare what is live rather than when the GC last ran. */
function memoryAfterGc(): MemorySample {
  if (!globalThis.gc) throw new Error('scale node: run with --expose-gc');
  globalThis.gc();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
}

/** Nest's logger for the node: warnings and errors are counted (a clean phase has none), the rest dropped. */
class CountingLogger implements LoggerService {
  constructor(private readonly recorder: TickRecorder) {}

  log(): void {}

  warn(message: unknown): void {
    this.recorder.recordWarning(`warn: ${format(message)}`);
  }

  error(message: unknown): void {
    this.recorder.recordWarning(`error: ${format(message)}`);
  }
}

/**
 * Reads the running totals at half past every wall-clock second: the jobs fire at whole seconds, so a
 * difference of two samples holds whole seconds of ticks, and the bench samples the store at the same moments.
 */
function sampleEverySecond(recorder: TickRecorder, counts: () => StoreCounts): void {
  const read = (): SecondSample => {
    const { user, system } = process.cpuUsage();
    return { at: Date.now(), cpuMicros: user + system, ...counts() };
  };
  const scheduleNext = () => {
    const now = Date.now();
    const halfPast = Math.floor(now / 1_000) * 1_000 + 500;
    const at = halfPast > now ? halfPast : halfPast + 1_000;
    setTimeout(() => {
      recorder.recordSample(Math.floor(at / 1_000), read());
      scheduleNext();
    }, at - now);
  };
  scheduleNext();
}

/** What a node's store client sent so far. */
type StoreCounts = Pick<SecondSample, 'roundTrips' | 'commands' | 'scriptCalls'>;

/** The lock module's store, connected, and what its client sent so far. */
async function connectStore(env: ScaleNodeEnv): Promise<{
  options: Pick<SchedulerLockModuleOptions, 'redis' | 'keyPrefix' | 'provider'>;
  counts: () => StoreCounts;
}> {
  if (env.BENCH_STORE === 'postgres') {
    const { PostgresLockProvider } = await import('nest-scheduler-lock/postgres');
    // The provider's batches (claims, job locks, releases, renewals) are its statements over unnest(…) arrays.
    const counting = countingPool({ connectionString: env.BENCH_STORE_URL, max: 3 }, (text) =>
      text.startsWith('WITH input AS'),
    );
    const tablePrefix = `${env.BENCH_KEY_PREFIX}_`;
    const provider = new PostgresLockProvider(counting.pool, { tablePrefix, node: env.BENCH_NODE });
    await provider.createTables();
    const counts = () => ({
      roundTrips: counting.statements(),
      commands: counting.statements(),
      scriptCalls: counting.lockCalls(),
    });
    return { options: { provider }, counts };
  }
  const client = new Redis(env.BENCH_STORE_URL);
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve);
    client.once('error', reject);
  });
  const counter = countCommands(client);
  const counts = () => ({
    roundTrips: counter.roundTrips,
    commands: counter.total,
    scriptCalls: (counter.byName.get('evalsha') ?? 0) + (counter.byName.get('eval') ?? 0),
  });
  return { options: { redis: client, keyPrefix: env.BENCH_KEY_PREFIX }, counts };
}

async function main(): Promise<void> {
  const env = readEnv();
  const jobs = Number(env.BENCH_JOBS);
  const locked = env.BENCH_MODE !== 'unlocked';
  // `leader`: every job runs on the leader of one election; the other nodes skip their ticks without a store call.
  const lockOptions = env.BENCH_MODE === 'leader' ? { leader: LEADER_ELECTION } : {};
  const recorder = new TickRecorder(jobs);
  // cron reports a missed execution deadline through console.warn; "Executing immediately" is a late tick.
  console.warn = (...args: unknown[]) => {
    const text = format(...args);
    if (LATE_TICK.test(text)) recorder.recordLateTick();
    else recorder.recordWarning(`console.warn: ${text}`);
  };
  console.error = (...args: unknown[]) => recorder.recordWarning(`console.error: ${format(...args)}`);
  process.on('unhandledRejection', (reason) => recorder.recordWarning(`unhandledRejection: ${format(reason)}`));

  let counts: () => StoreCounts = () => ({ roundTrips: 0, commands: 0, scriptCalls: 0 });
  const imports: DynamicModule[] = [ScheduleModule.forRoot()];
  if (locked) {
    const store = await connectStore(env);
    counts = store.counts;
    imports.push(SchedulerLockModule.forRoot({ ...store.options, node: env.BENCH_NODE, defaultLockAtMostFor: '10s' }));
  }

  @Module({ imports })
  class ScaleNodeModule {}

  const app = await NestFactory.createApplicationContext(ScaleNodeModule, { logger: new CountingLogger(recorder) });
  const emptyMemory = memoryAfterGc();
  // Why attempts were skipped (a store error is a run lost to the store, not to another node's lock).
  if (locked)
    app.get(LockEvents).events$.subscribe((event) => {
      if (event.type === 'skipped') recorder.recordSkip(event.reason, event.at.getTime());
    });

  // A tick's fire time: cron's timer callback never runs before the fire time it was set for, so a tick
  // belongs to the latest whole second (exact while cron is less than a second late; a tick a second late
  // or more means cron skipped a fire time, and the counts show one occurrence missed either way). The
  // unlocked handler runs inside that callback; a locked one after its claim, so its tick is when the lock
  // was asked for. A locked run is counted for the occurrence the lock module claimed for it; a claim of a
  // fire time after the tick's (an early claim) is counted apart, and must not happen.
  const firedAt = (tickMs: number) => Math.floor(tickMs / 1_000) * 1_000;
  const handler = locked
    ? (job: number) => () => {
        const startedAt = Date.now();
        const lock = currentLock();
        const occurrence = lock?.occurrence?.getTime();
        if (!lock || occurrence === undefined) {
          recorder.recordRunWithoutLock();
          recorder.record(job, firedAt(startedAt), startedAt - firedAt(startedAt));
          return;
        }
        // lockedAt maps a monotonic reading through Date.now()'s whole milliseconds: up to 1 ms early.
        const fireTime = firedAt(lock.lockedAt.getTime() + 1);
        if (occurrence > fireTime) recorder.recordEarlyClaim(occurrence);
        recorder.record(job, occurrence, startedAt - fireTime);
      }
    : (job: number) => () => {
        const startedAt = Date.now();
        recorder.record(job, firedAt(startedAt), startedAt - firedAt(startedAt));
      };

  // Runtime jobs as the README shows them: declare the lock, add the job, then start it.
  const registry = app.get(SchedulerRegistry);
  const lockedJobs = locked ? app.get(LockedJobRegistry) : undefined;
  const cronJobs: CronJob[] = [];
  for (let job = 0; job < jobs; job++) {
    const name = `tenant-${job}`;
    lockedJobs?.declare(name, lockOptions);
    const cronJob = CronJob.from({
      cronTime: env.BENCH_CRON ?? EVERY_SECOND,
      onTick: handler(job),
      start: false,
      ...(env.BENCH_CRON_THRESHOLD === undefined ? {} : { threshold: Number(env.BENCH_CRON_THRESHOLD) }),
    });
    registry.addCronJob(name, cronJob);
    cronJobs.push(cronJob);
  }
  for (const cronJob of cronJobs) cronJob.start();

  sampleEverySecond(recorder, counts);
  process.on('SIGUSR2', () => send(recorder.report(memoryAfterGc())));
  send({ type: 'ready', emptyMemory });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `scale node failed to start: ${error instanceof Error ? (error.stack ?? error.message) : format(error)}\n`,
  );
  process.exit(1);
});
