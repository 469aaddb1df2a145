/**
 * What job health costs Redis, on a private redis-server (its `INFO commandstats` count this bench alone).
 * Ticks: the commands a cron tick sends that runs or skips, in an app whose heartbeat (and health check) runs
 * every 100 ms, against one whose heartbeat waits an hour. Periodic: Redis's own time (`commandstats` usec, and
 * the server's CPU time) per heartbeat of a node with 20 jobs, with and without skips, and per health check of the
 * turn's holder. A heartbeat's commands are sent together: one round trip.
 *
 * Run: `npm run bench:health` (env HEALTH_COST_CALLS calls per periodic figure, HEALTH_COST_ROUNDS seconds of ticks).
 */
import 'reflect-metadata';
import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { Redis } from 'ioredis';
import { LockedJobRegistry, LockEvents, SchedulerLockModule } from 'nest-scheduler-lock';
import { RedisLockProvider } from 'nest-scheduler-lock/redis';
import { startPrivateRedisServer } from '../test/support/redis-server.js';
import { countCommands } from './support/command-counter.js';
import { describeEnvironment, loadAverage, numberFromEnv } from './support/environment.js';
import { median } from './support/stats.js';
import { markdownTable } from './support/table.js';

const JOBS = 20;
const CALLS = numberFromEnv('HEALTH_COST_CALLS', 1_000);
const ROUNDS = numberFromEnv('HEALTH_COST_ROUNDS', 5);
/** History entries a health check reads per job (the admin's last-run lookback). */
const LOOKBACK = 20;
const names = Array.from({ length: JOBS }, (_, index) => `job-${index}`);

/** Redis's calls and µs per command name since the last `CONFIG RESETSTAT`. */
async function commandStats(admin: Redis): Promise<Map<string, { calls: number; usec: number }>> {
  const stats = new Map<string, { calls: number; usec: number }>();
  for (const [, name, calls, usec] of (await admin.info('commandstats')).matchAll(
    /cmdstat_([^:]+):calls=(\d+),usec=(\d+)/g,
  )) {
    stats.set(name, { calls: Number(calls), usec: Number(usec) });
  }
  return stats;
}

/** The redis-server process's CPU time so far (µs): reading commands and writing replies too. */
async function serverCpu(admin: Redis): Promise<number> {
  const info = await admin.info('cpu');
  const seconds = (field: string) => Number(new RegExp(`${field}:([\\d.]+)`).exec(info)?.[1]);
  return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6;
}

/**
 * Redis's time per call of `op` over {@link CALLS} sequential calls: the µs of the commands the client sent (a
 * script's own commands are inside its EVALSHA's time, and counted apart by Redis), the server's CPU time, and
 * the commands sent per call.
 */
async function serverCost(client: Redis, admin: Redis, op: () => Promise<unknown>): Promise<string[]> {
  await op();
  const counter = countCommands(client);
  await admin.config('RESETSTAT');
  const cpuBefore = await serverCpu(admin);
  for (let call = 0; call < CALLS; call++) await op();
  const cpu = (await serverCpu(admin)) - cpuBefore;
  const stats = await commandStats(admin);
  counter.uninstall();
  const sent = [...counter.byName].map(([name, calls]) => `${name} ${calls / CALLS}`).join(', ');
  const usec = [...counter.byName.keys()].reduce((sum, name) => sum + (stats.get(name)?.usec ?? 0), 0);
  return [sent, (usec / CALLS).toFixed(1), (cpu / CALLS).toFixed(1)];
}

/** The heartbeat and the health check of a node running 20 jobs, each with 20 runs in its history. */
async function periodicCosts(url: string, admin: Redis): Promise<string[][]> {
  const client = new Redis(url);
  const provider = new RedisLockProvider(client, { keyPrefix: 'periodic', node: 'node-1' });
  const operators = provider.operatorProvider();
  const report = { startedAt: new Date(), durationMs: 3, attempt: 1 };
  for (const lockName of names) {
    for (let run = 0; run < LOOKBACK; run++) {
      const claim = await provider.lockJob({ name: lockName, lockAtMostFor: 10_000, lockAtLeastFor: 0 }, false);
      if (!('lock' in claim)) throw new Error(`${lockName}: not taken (${claim.refused})`);
      await claim.lock.finish!('succeeded', report);
    }
  }
  const catalogue = names.map((jobName) => ({
    jobName,
    lockName: jobName,
    kind: 'cron' as const,
    schedule: '* * * * * *',
    timeZone: null,
    lockAtMostFor: 10_000,
    lockAtLeastFor: 0,
    lease: null,
    occurrence: true,
  }));
  const node = () => ({
    node: 'node-1',
    version: '1',
    startedAt: new Date(0),
    lastSeen: new Date(),
    jobs: names,
    elections: [],
  });
  const bid = { lease: 7_500, unhealthy: {} };
  await operators.publish(node(), catalogue, new Map(), bid);
  // A node that skipped each job's ticks of the interval (5 s of a every-second job) while another node ran them.
  const skips = new Map(names.map((name) => [name, new Map([['already-ran' as const, 5]])]));
  try {
    return [
      [
        'heartbeat, no skips',
        ...(await serverCost(client, admin, () => operators.publish(node(), [], new Map(), bid))),
      ],
      [
        `heartbeat, skips of ${JOBS} jobs`,
        ...(await serverCost(client, admin, () => operators.publish(node(), [], skips, bid))),
      ],
      [
        `health check (clusterReading, ${JOBS} jobs × ${LOOKBACK} entries)`,
        ...(await serverCost(client, admin, () => operators.clusterReading(LOOKBACK))),
      ],
      ['PING: the floor of one request', ...(await serverCost(client, admin, () => client.ping()))],
    ];
  } finally {
    await client.quit();
  }
}

/** An app with one every-second cron job per name, locked, never started: the bench fires its ticks. */
async function startApp(url: string, keyPrefix: string, heartbeatInterval: string) {
  const client = new Redis(url);
  @Module({
    imports: [
      ScheduleModule.forRoot(),
      SchedulerLockModule.forRoot({
        redis: client,
        keyPrefix,
        node: 'node-1',
        defaultLockAtMostFor: '10s',
        heartbeatInterval,
      }),
    ],
  })
  class HealthCostModule {}
  const app: INestApplicationContext = await NestFactory.createApplicationContext(HealthCostModule, { logger: false });
  await app.init();
  const registry = app.get(SchedulerRegistry);
  const jobs = names.map((name) => {
    app.get(LockedJobRegistry).declare(name);
    const job = CronJob.from({ cronTime: '* * * * * *', onTick: () => undefined, start: false });
    registry.addCronJob(name, job);
    return job;
  });
  return { app, client, jobs };
}

/** Commands each tick sent, by what became of it, over {@link ROUNDS} seconds: each job fired twice a second. */
async function tickCommands(url: string, keyPrefix: string, heartbeatInterval: string) {
  const { app, client, jobs } = await startApp(url, keyPrefix, heartbeatInterval);
  const counter = countCommands(client);
  const events = app.get(LockEvents).events$;
  const sent = { released: [] as number[], skipped: [] as number[] };
  try {
    // Round 0 warms up: the server's first call of each script is EVALSHA answered NOSCRIPT, then EVAL.
    for (let round = 0; round <= ROUNDS; round++) {
      // From just past a whole second: the first fire of each job runs its occurrence, the second skips it.
      await new Promise((resolve) => setTimeout(resolve, 1_050 - (Date.now() % 1_000)));
      for (const [index, job] of jobs.entries()) {
        for (let fire = 0; fire < 2; fire++) {
          const before = counter.total;
          const settled = new Promise<'released' | 'skipped'>((resolve) => {
            const subscription = events.subscribe((event) => {
              if (event.jobName !== names[index] || (event.type !== 'released' && event.type !== 'skipped')) return;
              subscription.unsubscribe();
              resolve(event.type);
            });
          });
          void job.fireOnTick();
          const outcome = await settled;
          if (round > 0) sent[outcome].push(counter.total - before);
        }
      }
    }
  } finally {
    counter.uninstall();
    await app.close();
    await client.quit();
  }
  const row = (counts: number[]) =>
    `${counts.length} ticks: median ${median(counts)}, min ${Math.min(...counts)}, max ${Math.max(...counts)}`;
  return [row(sent.released), row(sent.skipped)];
}

const server = await startPrivateRedisServer();
const admin = new Redis(server.url);
try {
  console.log(`${await describeEnvironment(admin)} · private redis-server · ${loadAverage()} at the start\n`);
  console.log('Commands a cron tick sends (counted on the app client; a heartbeat in the same window counts too)\n');
  const idle = await tickCommands(server.url, 'idle', '1h');
  const checking = await tickCommands(server.url, 'checking', '100ms');
  console.log(
    markdownTable(
      ['app', 'tick that runs (claim + finish)', 'tick that skips (already-ran)'],
      [
        ['heartbeat every hour: no health check meanwhile', ...idle],
        ['heartbeat and health check every 100 ms', ...checking],
      ],
    ),
  );
  console.log(`\nPer call, ${CALLS} sequential calls, ${JOBS} jobs; Redis time from INFO commandstats\n`);
  console.log(
    markdownTable(
      ['call', 'commands sent per call', 'Redis µs per call (commandstats)', 'redis-server CPU µs per call'],
      await periodicCosts(server.url, admin),
    ),
  );
  console.log(`\n${loadAverage()} at the end`);
} finally {
  await admin.quit();
  await server.stop();
}
