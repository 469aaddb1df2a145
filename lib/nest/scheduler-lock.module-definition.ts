import { ConfigurableModuleBuilder, type ConfigurableModuleAsyncOptions } from '@nestjs/common';
import type { SchedulerLockModuleOptions } from './scheduler-lock-module-options.interface.js';

/** Options of the module itself rather than of the locks, beside the options of `forRoot()` / `forRootAsync()`. */
export interface SchedulerLockModuleExtras {
  /**
   * Register the module globally, so every module of the app can inject `LockingTaskExecutor`,
   * `LockEvents`, `LockedJobRegistry` and `LockedJobStatus` without importing it. Default `true`.
   */
  isGlobal?: boolean;
}

/** The name of the method a `useClass` / `useExisting` options factory implements. */
const FACTORY_METHOD = 'createSchedulerLockOptions';

export const {
  ConfigurableModuleClass: ConfigurableSchedulerLockModule,
  MODULE_OPTIONS_TOKEN: SCHEDULER_LOCK_MODULE_OPTIONS,
} = new ConfigurableModuleBuilder<SchedulerLockModuleOptions>()
  .setClassMethodName('forRoot')
  .setFactoryMethodName(FACTORY_METHOD)
  .setExtras<SchedulerLockModuleExtras>({ isGlobal: true }, (definition, { isGlobal }) => ({
    ...definition,
    global: isGlobal,
  }))
  .build();

/**
 * A class that gives the module its options, for `forRootAsync({ useClass })` or
 * `forRootAsync({ useExisting })` (as `ThrottlerOptionsFactory` is for `@nestjs/throttler`).
 */
export interface SchedulerLockOptionsFactory {
  createSchedulerLockOptions(): SchedulerLockModuleOptions | Promise<SchedulerLockModuleOptions>;
}

/** The argument of `SchedulerLockModule.forRootAsync()`: `useFactory` (with `inject`), `useClass` or `useExisting`. */
export interface SchedulerLockModuleAsyncOptions
  extends
    ConfigurableModuleAsyncOptions<SchedulerLockModuleOptions, typeof FACTORY_METHOD>,
    SchedulerLockModuleExtras {}
