import { Inject, Injectable, type OnApplicationShutdown, type OnModuleDestroy } from '@nestjs/common';
import { LockingTaskExecutor } from './core/locking-task-executor.js';
import { SCHEDULER_LOCK_SETTINGS } from './scheduler-lock.constants.js';
import type { SchedulerLockSettings } from './scheduler-lock.settings.js';

/**
 * Graceful shutdown: locked runs in progress are drained first (while the app's other providers still
 * work), and the Redis client the module created is closed last. A client the app handed in is the
 * app's to close.
 */
@Injectable()
export class SchedulerLockLifecycle implements OnModuleDestroy, OnApplicationShutdown {
  constructor(
    @Inject(SCHEDULER_LOCK_SETTINGS) private readonly settings: SchedulerLockSettings,
    private readonly executor: LockingTaskExecutor,
  ) {}

  async onModuleDestroy(): Promise<void> {
    await this.executor.shutdown(this.settings.shutdownTimeout);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.settings.ownedClient?.quit().catch(() => this.settings.ownedClient?.disconnect());
  }
}
