import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { LockProviderMisconfiguredError } from '../core/provider/errors.js';
import { LockingTaskExecutor } from '../core/executor/locking-task-executor.js';
import { canCheckProvider } from '../core/provider/provider-abilities.js';
import { RecoveryWatcher } from '../occurrence/recovery-watcher.js';
import { ClusterPresence } from './cluster-presence.js';
import { LeaderElections } from './leader-elections.js';
import { JobHealthWatch } from './job-health-watch.js';
import { LockedJobRegistry } from './locked-job.registry.js';
import { SCHEDULER_LOCK_SETTINGS } from './scheduler-lock.constants.js';
import type { SchedulerLockSettings } from './scheduler-lock.settings.js';

/**
 * The store's startup check, before the jobs are mounted: a store that refuses the module's
 * configuration fails the startup (or, with `startupCheck: 'warn'`, logs it once). Outage reports from
 * startup on (they name the number of locked jobs, known once the app started).
 * Graceful shutdown: locked runs in progress are drained first (while the app's other providers still
 * work), and the Redis client the module created is closed last. A client the app handed in is the
 * app's to close.
 */
@Injectable()
export class SchedulerLockLifecycle
  implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown
{
  constructor(
    @Inject(SCHEDULER_LOCK_SETTINGS) private readonly settings: SchedulerLockSettings,
    private readonly executor: LockingTaskExecutor,
    private readonly jobs: LockedJobRegistry,
    private readonly watcher: RecoveryWatcher,
    private readonly presence: ClusterPresence,
    private readonly elections: LeaderElections,
    private readonly health: JobHealthWatch,
  ) {}

  async onModuleInit(): Promise<void> {
    const { provider, startupCheck } = this.settings;
    if (!canCheckProvider(provider)) return;
    try {
      await provider.checkProvider();
    } catch (error) {
      if (startupCheck === 'fail' || !(error instanceof LockProviderMisconfiguredError)) throw error;
      new Logger('SchedulerLock').warn(`${error.message}; starting anyway (startupCheck: 'warn')`);
    }
  }

  onApplicationBootstrap(): void {
    this.settings.outages?.start(() => this.jobs.size);
    this.presence.start();
    this.elections.start();
  }

  async onModuleDestroy(): Promise<void> {
    this.watcher.stop();
    this.presence.stop();
    await this.elections.stop(); // released first: a follower takes over at once
    await this.health.stop();
    await this.presence.handBackTurn();
    await this.executor.shutdown(this.settings.shutdownTimeout);
  }

  async onApplicationShutdown(): Promise<void> {
    this.settings.outages?.close();
    await this.settings.closeStore?.();
  }
}
