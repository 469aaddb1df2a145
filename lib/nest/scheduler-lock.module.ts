import { Logger, Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { LockEvents } from '../core/task/lock-events.js';
import { DecoratedJobMounts } from './decorated-job-mounts.js';
import { ExplorerHandlers } from './explorer-handlers.js';
import { LockingTaskExecutor } from '../core/executor/locking-task-executor.js';
import { LeaderElections } from './leader-elections.js';
import { LockedJobRegistry } from './locked-job.registry.js';
import { RecoveryWatcher } from '../occurrence/recovery-watcher.js';
import { SchedulerLockLifecycle } from './scheduler-lock.lifecycle.js';
import { hasOperatorProvider } from '../operators/operator-abilities.js';
import { ClusterPresence } from './cluster-presence.js';
import { JobHealthWatch } from './job-health-watch.js';
import { OperatorTriggers } from './operator-triggers.js';
import { PlainLockTicks } from './plain-lock-ticks.js';
import { RegisteredJobs } from './registered-jobs.js';
import { SchedulerLockAdmin } from './scheduler-lock-admin.js';
import {
  SCHEDULER_LOCK_OPERATOR_PROVIDER,
  SCHEDULER_LOCK_PROVIDER,
  SCHEDULER_LOCK_SETTINGS,
} from './scheduler-lock.constants.js';
import { SchedulerLockExplorer } from './scheduler-lock.explorer.js';
import { SchedulerLockMetadataAccessor } from './scheduler-lock-metadata.accessor.js';
import type { SchedulerLockModuleOptions } from './scheduler-lock-module-options.interface.js';
import {
  assertAsyncOptions,
  ConfigurableSchedulerLockModule,
  SCHEDULER_LOCK_MODULE_OPTIONS,
  type SchedulerLockModuleAsyncOptions,
  type SchedulerLockModuleExtras,
  type SchedulerLockOptionsFactory,
} from './scheduler-lock.module-definition.js';
import { createSchedulerLockSettings, type SchedulerLockSettings } from './scheduler-lock.settings.js';
import { SchedulerRegistryProxy } from './scheduler-registry.proxy.js';

/**
 * Makes `@nestjs/schedule` jobs marked with `@SchedulerLock()` run on one node at a time. Import it
 * once with `forRoot()` or `forRootAsync()`, next to `ScheduleModule.forRoot()`; it is global unless
 * `isGlobal: false`.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: SCHEDULER_LOCK_SETTINGS,
      useFactory: createSchedulerLockSettings,
      inject: [SCHEDULER_LOCK_MODULE_OPTIONS],
    },
    {
      provide: SCHEDULER_LOCK_PROVIDER,
      useFactory: (settings: SchedulerLockSettings) => settings.provider,
      inject: [SCHEDULER_LOCK_SETTINGS],
    },
    LockEvents,
    {
      provide: LockingTaskExecutor,
      useFactory: (settings: SchedulerLockSettings, events: LockEvents) =>
        new LockingTaskExecutor(settings.provider, {
          defaults: settings.defaults,
          node: settings.node,
          events,
          acquireTimeout: settings.acquireTimeout,
          outages: settings.outages,
          logger: new Logger('SchedulerLock'),
          instrumentation: settings.instrumentation,
          logSkips: settings.logSkips,
        }),
      inject: [SCHEDULER_LOCK_SETTINGS, LockEvents],
    },
    {
      provide: SCHEDULER_LOCK_OPERATOR_PROVIDER,
      useFactory: ({ provider }: SchedulerLockSettings) =>
        hasOperatorProvider(provider) ? provider.operatorProvider() : undefined,
      inject: [SCHEDULER_LOCK_SETTINGS],
    },
    LockedJobRegistry,
    RegisteredJobs,
    ClusterPresence,
    JobHealthWatch,
    OperatorTriggers,
    SchedulerLockAdmin,
    { provide: RecoveryWatcher, useFactory: () => new RecoveryWatcher() },
    SchedulerLockMetadataAccessor,
    SchedulerLockExplorer,
    PlainLockTicks,
    DecoratedJobMounts,
    ExplorerHandlers,
    SchedulerRegistryProxy,
    LeaderElections,
    SchedulerLockLifecycle,
  ],
  exports: [
    SCHEDULER_LOCK_PROVIDER,
    LockEvents,
    LockingTaskExecutor,
    LockedJobRegistry,
    SchedulerLockAdmin,
    LeaderElections,
  ],
})
export class SchedulerLockModule extends ConfigurableSchedulerLockModule {
  /** The module with `options`, validated when the app starts (a `SchedulerLockConfigurationError` if bad). */
  static override forRoot(options: SchedulerLockModuleOptions & SchedulerLockModuleExtras): DynamicModule {
    return super.forRoot(options);
  }

  /**
   * The module with options from `useFactory` (with `inject`), `useClass` or `useExisting` (a
   * {@link SchedulerLockOptionsFactory}), validated when the app starts.
   */
  static override forRootAsync(options: SchedulerLockModuleAsyncOptions): DynamicModule {
    assertAsyncOptions(options);
    return super.forRootAsync(options);
  }
}
