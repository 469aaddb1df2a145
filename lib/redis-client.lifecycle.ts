import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { SCHEDULER_LOCK_SETTINGS } from './scheduler-lock.constants.js';
import type { SchedulerLockSettings } from './scheduler-lock.settings.js';

/** Closes the Redis client the module created; a client the app handed in is the app's to close. */
@Injectable()
export class RedisClientLifecycle implements OnApplicationShutdown {
  constructor(@Inject(SCHEDULER_LOCK_SETTINGS) private readonly settings: SchedulerLockSettings) {}

  async onApplicationShutdown(): Promise<void> {
    await this.settings.ownedClient?.quit().catch(() => this.settings.ownedClient?.disconnect());
  }
}
