import { Module, type INestApplicationContext, type LoggerService, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { LockingTaskExecutor } from '../../core/executor/locking-task-executor.js';
import type { LockProvider } from '../../core/provider/lock-provider.js';
import { SchedulerLockModule } from '../../nest/scheduler-lock.module.js';
import { uniqueLockName } from '../lock-probes.js';
import { contractJobs, type ContractJobNames, type ContractJobs } from './contract-jobs.js';

/** An app with `ScheduleModule` and `SchedulerLockModule` on the provider under test, and what it did. */
export interface ContractApp {
  readonly names: ContractJobNames;
  readonly jobs: ContractJobs;
  readonly executor: LockingTaskExecutor;
  /** What the app logged at `error` and `warn` level. */
  readonly complaints: string[];
  close(): Promise<void>;
}

/** Keeps the app's errors and warnings (a check fails on any), and drops the rest. */
class ComplaintLog implements LoggerService {
  readonly complaints: string[] = [];
  log(): void {}
  error(message: unknown, ...context: unknown[]): void {
    this.complaints.push(`error: ${String(message)} ${context.map(String).join(' ')}`.trim());
  }
  warn(message: unknown, ...context: unknown[]): void {
    this.complaints.push(`warn: ${String(message)} ${context.map(String).join(' ')}`.trim());
  }
}

/** An app of the kit: its context, its jobs (`Jobs`, which record its lock events), and what it complained of. */
export interface KitApp<J> {
  readonly context: INestApplicationContext;
  readonly jobs: J;
  /** What the app logged at `error` and `warn` level. */
  readonly complaints: string[];
  close(): Promise<void>;
}

/** Starts an app with `ScheduleModule` and `SchedulerLockModule` on `provider`, running `Jobs`. */
export async function startKitApp<J>(provider: LockProvider, Jobs: Type<J>): Promise<KitApp<J>> {
  @Module({
    imports: [ScheduleModule.forRoot(), SchedulerLockModule.forRoot({ provider, defaultLockAtMostFor: '10s' })],
    providers: [Jobs],
  })
  class KitAppModule {}

  const log = new ComplaintLog();
  const context = await NestFactory.createApplicationContext(KitAppModule, { logger: log, abortOnError: false });
  return { context, jobs: context.get(Jobs), complaints: log.complaints, close: () => context.close() };
}

/**
 * Starts an app whose locks are `provider`'s, with a cron, an interval and a timeout job of fresh names,
 * which look at their locks from `other`.
 */
export async function startContractApp(provider: LockProvider, other: LockProvider): Promise<ContractApp> {
  const names = {
    cron: uniqueLockName('cron'),
    interval: uniqueLockName('interval'),
    timeout: uniqueLockName('timeout'),
  };
  const app = await startKitApp(provider, contractJobs(names, other));
  return { ...app, names, executor: app.context.get(LockingTaskExecutor) };
}
