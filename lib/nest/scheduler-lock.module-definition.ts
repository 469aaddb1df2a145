import { ConfigurableModuleBuilder, type ConfigurableModuleAsyncOptions } from '@nestjs/common';
import { SchedulerLockConfigurationError } from '../core/provider/lock-configuration.js';
import { optionsObject } from '../core/provider/option-values.js';
import type { SchedulerLockModuleOptions } from './scheduler-lock-module-options.interface.js';

/** Options of the module itself rather than of the locks, beside the options of `forRoot()` / `forRootAsync()`. */
export interface SchedulerLockModuleExtras {
  /**
   * Register the module globally, so every module of the app can inject `LockingTaskExecutor`,
   * `LockEvents`, `LockedJobRegistry` and `SchedulerLockAdmin` without importing it. Default `true`.
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

/** Every key of {@link SchedulerLockModuleAsyncOptions}: any other is a typo Nest would report obscurely, or not. */
const ASYNC_OPTIONS: readonly (keyof SchedulerLockModuleAsyncOptions)[] = [
  'useFactory',
  'useClass',
  'useExisting',
  'inject',
  'imports',
  'provideInjectionTokensFrom',
  'isGlobal',
];
const FACTORIES = ['useFactory', 'useClass', 'useExisting'] as const;

/** Checks the argument of `forRootAsync()`: known keys only, and exactly one way to make the options. */
export function assertAsyncOptions(options: SchedulerLockModuleAsyncOptions): void {
  const subject = 'SchedulerLockModule.forRootAsync()';
  optionsObject(options, ASYNC_OPTIONS, subject);
  const given = FACTORIES.filter((factory) => options[factory] !== undefined);
  if (given.length !== 1) {
    const got = given.length === 0 ? 'none' : given.join(' and ');
    throw new SchedulerLockConfigurationError(
      `${subject}: set one of useFactory, useClass and useExisting (got ${got})`,
    );
  }
}
