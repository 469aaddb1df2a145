import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { SchedulerLockModule } from 'nest-scheduler-lock';
import { AppJournal, describe, JournalLogger } from './app-journal.js';
import { ChaosJobs } from './chaos-jobs.js';

/**
 * One app of the chaos soak, as users write one: a Nest application context with `@nestjs/schedule`
 * and the BUILT package (the self-reference `nest-scheduler-lock` resolves to dist/), the module owning
 * its Redis client. Started by test/chaos/app-fleet.ts, under libfaketime, with its Redis URL pointing
 * at its own fault-injecting proxy. Its journal is its stdout.
 */

/** The environment the soak gives each app. */
export interface ChaosAppEnv {
  /** The app's name, also its `lockedBy`. */
  CHAOS_NODE: string;
  /** The app's proxy in front of the soak's Redis. */
  CHAOS_REDIS_URL: string;
  CHAOS_KEY_PREFIX: string;
}

function readEnv(): ChaosAppEnv {
  const env = process.env as Partial<ChaosAppEnv>;
  const missing = (['CHAOS_NODE', 'CHAOS_REDIS_URL', 'CHAOS_KEY_PREFIX'] as const).filter((name) => !env[name]);
  if (missing.length) throw new Error(`chaos app: missing environment variable(s) ${missing.join(', ')}`);
  return env as ChaosAppEnv;
}

async function main(): Promise<void> {
  const env = readEnv();
  const journal = new AppJournal(env.CHAOS_NODE);
  journal.watchProcess();

  @Module({
    imports: [
      ScheduleModule.forRoot(),
      SchedulerLockModule.forRoot({
        redis: env.CHAOS_REDIS_URL,
        keyPrefix: env.CHAOS_KEY_PREFIX,
        lockedBy: env.CHAOS_NODE,
        defaultLockAtMostFor: '10s',
      }),
    ],
    providers: [{ provide: AppJournal, useValue: journal }, ChaosJobs],
  })
  class ChaosAppModule {}

  await NestFactory.createApplicationContext(ChaosAppModule, { logger: new JournalLogger(journal) });
  // `wall` and the line's `mono` are read microseconds apart: the soak compares `wall - mono` with its own
  // to see the skew libfaketime applies.
  journal.write({ type: 'ready', wall: Date.now() });
}

main().catch((error: unknown) => {
  process.stderr.write(`chaos app failed to start: ${describe(error)}\n`);
  process.exit(1);
});
