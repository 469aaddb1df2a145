import { Module, type INestApplicationContext, type LoggerService, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { LockingTaskExecutor } from '../../core/executor/locking-task-executor.js';
import type { LockProvider } from '../../core/provider/lock-provider.js';
import { SchedulerLockModule } from '../../nest/scheduler-lock.module.js';
import { uniqueLockName } from '../lock-probes.js';
import type { KitClock } from '../provider-subject.js';
import { contractJobs, KIT_CLOCK, type ContractJobNames, type ContractJobs } from './contract-jobs.js';

/** An app with `ScheduleModule` and `SchedulerLockModule` on the provider under test, and what it did. */
export interface ContractApp {
  readonly names: ContractJobNames;
  readonly jobs: ContractJobs;
  readonly executor: LockingTaskExecutor;
  /** What the app logged at `error` and `warn` level. */
  readonly complaints: string[];
  close(): Promise<void>;
}

/** An app's errors and warnings (a check fails on any), of the lines that name one of its jobs' `names`. */
class ComplaintLog {
  readonly complaints: string[] = [];
  constructor(readonly names: readonly string[]) {}
}

/**
 * Nest's `logger` option replaces one logger for the whole process, so apps of checks that run at once share it.
 * Each line goes to the apps whose job names it contains, or to every live app when it names none.
 */
const liveLogs = new Set<ComplaintLog>();
const complaintRouter: LoggerService = {
  log() {},
  error: (message: unknown, ...context: unknown[]) => routeComplaint('error', message, context),
  warn: (message: unknown, ...context: unknown[]) => routeComplaint('warn', message, context),
};

/** Every app's log, closed ones too: a line an app logs after its close stays its own. */
const everyLog: ComplaintLog[] = [];

function routeComplaint(level: 'error' | 'warn', message: unknown, context: unknown[]): void {
  const line = `${level}: ${String(message)} ${context.map(String).join(' ')}`.trim();
  const named = everyLog.filter((log) => log.names.some((name) => line.includes(name)));
  for (const log of named.length > 0 ? named : liveLogs) log.complaints.push(line);
}

/** An app of the kit: its context, its jobs (`Jobs`, which record its lock events), and what it complained of. */
export interface KitApp<J> {
  readonly context: INestApplicationContext;
  readonly jobs: J;
  /** What the app logged at `error` and `warn` level. */
  readonly complaints: string[];
  close(): Promise<void>;
}

/**
 * Starts an app with `ScheduleModule` and `SchedulerLockModule` on `provider`, running `Jobs` (jobs `names`), which
 * wait on `clock`.
 */
export async function startKitApp<J>(
  provider: LockProvider,
  Jobs: Type<J>,
  names: readonly string[],
  clock: KitClock,
): Promise<KitApp<J>> {
  @Module({
    imports: [ScheduleModule.forRoot(), SchedulerLockModule.forRoot({ provider, defaultLockAtMostFor: '10s' })],
    providers: [Jobs, { provide: KIT_CLOCK, useValue: clock }],
  })
  class KitAppModule {}

  const log = new ComplaintLog(names);
  liveLogs.add(log);
  everyLog.push(log);
  try {
    const context = await NestFactory.createApplicationContext(KitAppModule, {
      logger: complaintRouter,
      abortOnError: false,
    });
    const close = () => context.close().finally(() => liveLogs.delete(log));
    return { context, jobs: context.get(Jobs), complaints: log.complaints, close };
  } catch (error) {
    liveLogs.delete(log);
    throw error;
  }
}

/**
 * Starts an app whose locks are `provider`'s, with a cron, an interval and a timeout job of fresh names,
 * which look at their locks from `other` and wait on `clock`.
 */
export async function startContractApp(
  provider: LockProvider,
  other: LockProvider,
  clock: KitClock,
): Promise<ContractApp> {
  const names = {
    cron: uniqueLockName('cron'),
    interval: uniqueLockName('interval'),
    timeout: uniqueLockName('timeout'),
  };
  const app = await startKitApp(provider, contractJobs(names, other), Object.values(names), clock);
  return { ...app, names, executor: app.context.get(LockingTaskExecutor) };
}
