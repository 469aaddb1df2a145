import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleDestroy,
} from '@nestjs/common';
import { LockingTaskExecutor } from '../core/locking-task-executor.js';
import { RecoveryWatcher } from '../occurrence/recovery-watcher.js';
import { ClusterPresence } from './cluster-presence.js';
import { LockedJobRegistry } from './locked-job.registry.js';
import { SCHEDULER_LOCK_SETTINGS } from './scheduler-lock.constants.js';
import type { SchedulerLockSettings } from './scheduler-lock.settings.js';

/**
 * Outage reports from startup on (they name the number of locked jobs, known once the app started).
 * Graceful shutdown: locked runs in progress are drained first (while the app's other providers still
 * work), and the Redis client the module created is closed last. A client the app handed in is the
 * app's to close.
 */
@Injectable()
export class SchedulerLockLifecycle implements OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown {
  constructor(
    @Inject(SCHEDULER_LOCK_SETTINGS) private readonly settings: SchedulerLockSettings,
    private readonly executor: LockingTaskExecutor,
    private readonly jobs: LockedJobRegistry,
    private readonly watcher: RecoveryWatcher,
    private readonly presence: ClusterPresence,
  ) {}

  onApplicationBootstrap(): void {
    this.settings.outages?.start(() => this.jobs.size);
    this.presence.start();
  }

  async onModuleDestroy(): Promise<void> {
    this.watcher.stop();
    this.presence.stop();
    await this.executor.shutdown(this.settings.shutdownTimeout);
  }

  async onApplicationShutdown(): Promise<void> {
    this.settings.outages?.close();
    await this.settings.ownedClient?.quit().catch(() => this.settings.ownedClient?.disconnect());
  }
}
