import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { SchedulerLockModule, type SchedulerLockModuleOptions } from 'nest-scheduler-lock';
import { AppJournal, describe, JournalLogger } from './app-journal.js';
import { ChaosJobs } from './chaos-jobs.js';
import { ChaosLeader } from './chaos-leader.js';

/**
 * One app of the chaos soak, as users write one: a Nest application context with `@nestjs/schedule`
 * and the BUILT package (the self-reference `nest-scheduler-lock` resolves to dist/): on Redis the module
 * owns its client; on PostgreSQL the app gives `PostgresLockProvider` a small pool of its own, as the README
 * says. Started by test/chaos/app-fleet.ts, under libfaketime, with its store URL pointing at its own
 * fault-injecting proxy. Its journal is its stdout.
 */

/** The environment the soak gives each app. */
export interface ChaosAppEnv {
  /** The app's name, also its `node`. */
  CHAOS_NODE: string;
  /** `redis` or `postgres`. */
  CHAOS_STORE: string;
  /** The app's proxy in front of the soak's store. */
  CHAOS_STORE_URL: string;
  /** Redis's key prefix; on PostgreSQL, the tables' prefix (with `_`). */
  CHAOS_KEY_PREFIX: string;
}

/** PostgreSQL's `statementTimeout` in the soak: the pauses (fault-schedule.ts) outlast it and its 1 s grace. */
const STATEMENT_TIMEOUT_MS = 1_000;

/** The same jobs and settings on either store: only where the locks live differs. */
async function storeOptions(env: ChaosAppEnv): Promise<SchedulerLockModuleOptions> {
  const common = { node: env.CHAOS_NODE, defaultLockAtMostFor: '10s' } as const;
  if (env.CHAOS_STORE === 'redis') return { ...common, redis: env.CHAOS_STORE_URL, keyPrefix: env.CHAOS_KEY_PREFIX };
  if (env.CHAOS_STORE !== 'postgres') throw new Error(`chaos app: CHAOS_STORE is "${env.CHAOS_STORE}"`);
  const [{ default: pg }, { PostgresLockProvider }] = await Promise.all([
    import('pg'),
    import('nest-scheduler-lock/postgres'),
  ]);
  const pool = new pg.Pool({ connectionString: env.CHAOS_STORE_URL, max: 3, connectionTimeoutMillis: 2_000 });
  const tablePrefix = `${env.CHAOS_KEY_PREFIX}_`;
  // Gives a silent statement up after 2 s (statement_timeout + 1 s), shorter than every store pause.
  const options = { node: env.CHAOS_NODE, tablePrefix, statementTimeout: STATEMENT_TIMEOUT_MS };
  return { ...common, provider: new PostgresLockProvider(pool, options) };
}

function readEnv(): ChaosAppEnv {
  const env = process.env as Partial<ChaosAppEnv>;
  const missing = (['CHAOS_NODE', 'CHAOS_STORE', 'CHAOS_STORE_URL', 'CHAOS_KEY_PREFIX'] as const).filter(
    (name) => !env[name],
  );
  if (missing.length) throw new Error(`chaos app: missing environment variable(s) ${missing.join(', ')}`);
  return env as ChaosAppEnv;
}

async function main(): Promise<void> {
  const env = readEnv();
  const journal = new AppJournal(env.CHAOS_NODE);
  journal.watchProcess();

  @Module({
    imports: [ScheduleModule.forRoot(), SchedulerLockModule.forRoot(await storeOptions(env))],
    providers: [{ provide: AppJournal, useValue: journal }, ChaosJobs, ChaosLeader],
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
