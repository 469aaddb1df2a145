import { Module, type LoggerService } from '@nestjs/common';
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
  const Jobs = contractJobs(names, other);

  @Module({
    imports: [ScheduleModule.forRoot(), SchedulerLockModule.forRoot({ provider, defaultLockAtMostFor: '10s' })],
    providers: [Jobs],
  })
  class ContractAppModule {}

  const log = new ComplaintLog();
  const context = await NestFactory.createApplicationContext(ContractAppModule, { logger: log, abortOnError: false });
  return {
    names,
    jobs: context.get(Jobs),
    executor: context.get(LockingTaskExecutor),
    complaints: log.complaints,
    close: () => context.close(),
  };
}
